//! The learner's scorecard: this checkout's exercises (or the reference,
//! with `--solutions`), graded
//! claim by claim, with the total on a line of its own (`Points X/Y`, for a
//! classroom's grading step to read) and the first failing claim's hint.
//!
//! Given `--postgres`, the grader grades the PostgreSQL track
//! too: the SQLite section comes first, as without the feature, then a
//! section of the same shape for `exercises/postgres/`, whose total reads
//! `Points on PostgreSQL X/Y` so that the line `Points X/Y` stays SQLite's.
//! Given `--etcd`, likewise a section for `exercises/etcd/`, whose total
//! reads `Points on etcd X/Y`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::learner::explain;
use lab_claims::{CLAIMS, LESSONS, Track};

use crate::engine::sandbox::{self, Sandbox};
use crate::engine::score::{ClaimScore, Graded, NeverRan, Scope, Score, Status, TrackScore};
use crate::engine::scratch;
use crate::engine::suite::{Built, Suite, Trouble};
use crate::instructor::gradescope;

/// What the learner does after a fix; the watch screen says its own.
pub const AGAIN: &str = "then run `cargo grade` again";

/// How many lines of a failing test's message the scorecard quotes.
const QUOTED_LINES: usize = 16;

/// How this checkout is graded: the scorecard's, `--watch`'s and
/// `--explain`'s settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The reference instead of the exercises (`--solutions`).
    pub solutions: bool,
    /// The test run's wall-clock limit.
    pub test_limit: Duration,
    /// The build's wall-clock limit.
    pub build_limit: Duration,
    /// Whether the runs go through the sandbox.
    pub sandbox: bool,
    /// The tracks graded, and the part (`--lesson`, `--claim`).
    pub scope: Scope,
}

/// Builds and runs this checkout's suite (in the sandbox, unless
/// `options.sandbox` is off) and prints the scorecard, also written to
/// `gradescope` if given. Exits 0 only when every claim passes, on every
/// graded track.
pub fn grade(
    options: &Options,
    gradescope: Option<&gradescope::Target>,
) -> Result<ExitCode, String> {
    let started = std::time::Instant::now();
    let graded = score(options, gradescope.is_some())?;
    if let Some(why) = &graded.unsandboxed {
        println!("\nGraded WITHOUT the sandbox ({why}).");
    }
    if !graded.held.is_empty() {
        println!(
            "\nYour code names what the grader's allowlist (staff/grader/allowlist.txt) does not \
             have; graded in a class, it would be on hold until your instructor accepts it:"
        );
        for flag in &graded.held {
            println!("  {flag}");
        }
    }
    let text = render(&graded);
    print!("{text}");
    if let Some(target) = gradescope {
        target.write(&graded, &text)?;
    }
    // The learner's own report: the class report's pages for a class of
    // one, each failure with its run drawn. Its path is the last line. A
    // part (`--claim`, `--lesson`) has no report of its own, and a report
    // that cannot be written changes no grade.
    if options.scope.part.is_none() {
        match write_report(options, &graded, started.elapsed()) {
            Ok(page) => println!("\n{REPORT_LINE}: {}", page.display()),
            Err(error) => eprintln!("grade: your report was not written: {error}"),
        }
    }
    Ok(if graded.score.full_marks() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What the line that gives the learner's report's path says before it.
pub const REPORT_LINE: &str =
    "Your report (each failing step, and where others acted, its run drawn)";

/// What the learner's report is called: its folder under the target
/// folder's `grade-report/`.
const REPORT_NAME: &str = "your-code";

/// Writes the report of this checkout's run as the class report writes a
/// class of one (`target/grade-report/`), and returns the path of its
/// submission's page.
pub fn write_report(
    options: &Options,
    graded: &Graded,
    elapsed: Duration,
) -> Result<PathBuf, String> {
    let checkout = crate::engine::checkout::repository();
    let out = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| checkout.join("target"), PathBuf::from)
        .join("grade-report");
    let name = if graded.solutions {
        "reference"
    } else {
        REPORT_NAME
    };
    let submission = crate::instructor::report::Graded {
        name: name.to_owned(),
        score: graded.score.clone(),
        error: graded.problem.clone(),
        short: crate::instructor::report::short_result(&graded.score),
        notes: Vec::new(),
        flags: Vec::new(),
        accepted: true,
        submitted: options.scope.tracks.list().to_vec(),
        elapsed,
    };
    crate::instructor::output::write_results(
        &out,
        name,
        &crate::instructor::report::results_json(&submission),
    )?;
    crate::instructor::output::write_class(
        &out,
        &[name.to_owned()],
        crate::instructor::output::Shard::WHOLE,
        options.sandbox && graded.unsandboxed.is_none(),
        options.scope.tracks,
        &[crate::instructor::report::Row::of(&submission)],
    )?;
    Ok(out.join(name).join("index.html"))
}

/// Builds and runs this checkout's suite (in the sandbox, unless
/// `options.sandbox` is off) and scores it. Cargo's own progress goes to
/// standard error.
///
/// With `shown_to_others` (Gradescope, whose page is not the run's own
/// terminal), code the review would hold is graded but not quoted: no
/// compiler message, test message, output or last words on stderr, until
/// an instructor has read what the review held.
pub fn score(options: &Options, shown_to_others: bool) -> Result<Graded, String> {
    let checkout = crate::engine::checkout::repository();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| checkout.join("target"));
    let (sandbox, unsandboxed) = checkout_sandbox(options, &checkout, &target_dir)?;
    let suite = Suite {
        dir: checkout,
        target_dir,
        solutions: options.solutions,
        scope: options.scope,
        interactive: true,
        tmp_dir: None,
        pg_template: None,
        sandbox,
        build_limit: options.build_limit,
        test_limit: options.test_limit,
    };
    suite.fetch()?;
    if suite.sandbox.is_some() {
        sandbox::share_sources()?;
    }
    let held = review(options.scope, options.solutions);
    let quote = !shown_to_others || held.is_empty();
    let (mut score, problem) = build_and_run(&suite, quote)?;
    if !quote {
        score.withhold_output();
    }
    Ok(Graded {
        score,
        problem,
        unsandboxed,
        held,
        solutions: options.solutions,
    })
}

/// The sandbox this checkout's suite runs in, or why it runs without one.
/// The learner's own code, on the learner's own machine: where bubblewrap
/// cannot run (macOS, Windows, a container without user namespaces) it is
/// graded without the sandbox, said in one line.
fn checkout_sandbox(
    options: &Options,
    checkout: &Path,
    target_dir: &Path,
) -> Result<(Option<Sandbox>, Option<String>), String> {
    let mut unsandboxed = (!options.sandbox).then(|| "--no-sandbox".to_owned());
    if options.sandbox {
        if let Err(reason) = sandbox::probe() {
            unsandboxed = Some(reason);
        }
    }
    if unsandboxed.is_some() {
        return Ok((None, unsandboxed));
    }
    std::fs::create_dir_all(target_dir)
        .map_err(|error| format!("cannot create {}: {error}", target_dir.display()))?;
    sandbox::hand_over(1, &[target_dir])?;
    // The checkout hidden, then its build inputs shown again, read-only:
    // no reference (unless it is what is graded), no class, no grader.
    let readable = scratch::build_inputs(checkout, options.solutions)
        .into_iter()
        .map(|part| checkout.join(part))
        .filter(|path| path.exists())
        .map(|path| sandbox::real(&path))
        .collect::<Result<Vec<_>, _>>()?;
    let sandbox = Sandbox {
        hidden: vec![sandbox::real(checkout)?],
        readable,
        writable: Vec::new(),
        worker: 1,
    };
    Ok((Some(sandbox), None))
}

/// Builds the suite and runs it: the score, and what kept the run from
/// scoring every claim, as the scorecard says it.
fn build_and_run(suite: &Suite, quote: bool) -> Result<(Score, Option<String>), String> {
    Ok(match suite.build()? {
        Built::Executable { path, .. } => {
            let ran = suite.run(&path, quote)?;
            let problem = ran.problem.map(|(trouble, problem)| {
                let advice = match trouble {
                    Trouble::TimedOut => "look for a loop, or a wait, that never ends",
                    Trouble::EndedEarly => {
                        "something ended the test process: process::exit, abort, or a crash"
                    }
                };
                format!("{problem}.\nA claim without a result is a FAIL: {advice}.")
            });
            (ran.score, problem)
        }
        Built::CompileError(first) => {
            let mut problem =
                format!("the code does not compile, so no test ran: fix the first error, {AGAIN}");
            if !quote {
                problem = format!(
                    "{problem}\n\nThe compiler's messages are not quoted while the code is on \
                     hold for review."
                );
            } else if !first.is_empty() {
                problem = format!("{problem}\n\n{first}");
            }
            (
                Score::nothing(suite.scope, NeverRan::DidNotCompile),
                Some(problem),
            )
        }
        Built::TimedOut(limit) => (
            Score::nothing(suite.scope, NeverRan::BuildTimedOut),
            Some(format!(
                "the build took longer than {} s and was stopped",
                limit.as_secs()
            )),
        ),
        Built::Failed(reason) => return Err(reason),
    })
}

/// The review of the graded exercise files, as a class grading would hold
/// them.
fn review(scope: Scope, solutions: bool) -> Vec<crate::engine::review::Flag> {
    let checkout = crate::engine::checkout::repository();
    crate::engine::submission::exercise_files(scope.tracks)
        .into_iter()
        .flat_map(|(_, file)| {
            let shown = if solutions {
                file.replacen("exercises/", "solutions/", 1)
            } else {
                file
            };
            let source = std::fs::read_to_string(checkout.join(&shown)).unwrap_or_default();
            crate::engine::review::scan(&shown, &source)
        })
        .collect()
}

/// The scorecard as text: a section per graded track. The run's problem,
/// which concerns every track, is told in the first.
fn render(graded: &Graded) -> String {
    let problem = graded.problem.as_deref();
    let mut out = String::new();
    for (index, track) in graded.score.tracks.iter().enumerate() {
        let told = if index == 0 { problem } else { None };
        out.push_str(&render_track(track, graded.solutions, told, problem));
    }
    out
}

/// One track's section.
fn render_track(
    score: &TrackScore,
    solutions: bool,
    problem: Option<&str>,
    run_problem: Option<&str>,
) -> String {
    let mut out = String::new();
    let (heading, points) = match score.track {
        Track::Sqlite => ("Scorecard", "Points"),
        Track::Postgres => ("Scorecard on PostgreSQL", "Points on PostgreSQL"),
        Track::Etcd => ("Scorecard on etcd", "Points on etcd"),
        Track::PostgresSql => (
            "Scorecard on PostgreSQL functions",
            "Points on PostgreSQL functions",
        ),
    };
    let _ = writeln!(
        out,
        "\n{heading}: {}",
        implementation(score.track, solutions)
    );
    // A lesson without a claim on the track (L7 on SQLite, L1 to L6 on
    // etcd) has no heading.
    let lessons = LESSONS.into_iter().filter(|lesson| {
        score
            .claims
            .iter()
            .any(|c| c.claim.lesson().id == lesson.id)
    });
    for lesson in lessons {
        let _ = writeln!(out, "\n{} {}", lesson.id, lesson.title);
        for claim in score
            .claims
            .iter()
            .filter(|c| c.claim.lesson().id == lesson.id)
        {
            // A claim worth 0 points is checked and shown, never counted:
            // "0/0" would read as a grade.
            let points = if claim.claim.points == 0 {
                "not graded".to_owned()
            } else {
                format!("{}/{}", claim.earned, claim.claim.points)
            };
            let _ = writeln!(
                out,
                "  {:<5} {}  {points}  {}",
                claim.claim.id,
                if claim.status == Status::Pass {
                    "pass"
                } else {
                    "FAIL"
                },
                claim.claim.text
            );
        }
    }
    if let Some(problem) = problem {
        let _ = writeln!(out, "\n{}", capitalized(problem));
    }
    let _ = writeln!(out, "\n{points} {}/{}", score.earned(), score.total());
    out.push_str(&full_marks(score, solutions));
    match score.first_not_passing() {
        None => {
            let _ = writeln!(out, "\n{}", all_pass(score));
        }
        Some(first) => out.push_str(&first_failing(score.track, first, run_problem)),
    }
    out
}

/// The line for a track whose every graded claim passes, naming the claims
/// worth 0 points that do not (the load test's verdict may depend on
/// timing: it is shown, never counted).
pub fn all_pass(score: &TrackScore) -> String {
    let ungraded = score.ungraded_not_passing();
    if ungraded.is_empty() {
        return "Every claim passes.".to_owned();
    }
    let named: Vec<String> = ungraded
        .iter()
        .map(|claim| {
            format!(
                "{} (`{}` says why)",
                claim.claim.id,
                claim
                    .claim
                    .test_command(score.track, claim.tests.iter().map(String::as_str))
            )
        })
        .collect();
    format!(
        "Every graded claim passes. Not graded (0 points) and not passing: {}.",
        named.join(", ")
    )
}

/// What the track's section grades: the exercises, or (`solutions`) the
/// reference.
pub fn implementation(track: Track, solutions: bool) -> &'static str {
    match track {
        Track::Sqlite if solutions => "the reference (solutions/)",
        Track::Sqlite => "your exercises (exercises/)",
        Track::Postgres if solutions => "the reference (solutions/postgres/)",
        Track::Postgres => "your exercises (exercises/postgres/)",
        Track::Etcd if solutions => "the reference (solutions/etcd/)",
        Track::Etcd => "your exercises (exercises/etcd/)",
        Track::PostgresSql if solutions => "the reference (solutions/postgres/contract.sql)",
        Track::PostgresSql => "your exercises (exercises/postgres/contract.sql)",
    }
}

/// The lessons at full marks on the track, and the command that shows how
/// the reference does the last of them; nothing for the reference itself.
fn full_marks(score: &TrackScore, solutions: bool) -> String {
    let full = crate::learner::explain::full_lessons(score);
    match full.last() {
        Some(last) if !solutions => format!(
            "Full marks on {}: to see the reference's lines for one beside yours, and the \
             mistakes its claims catch: {}\n",
            full.join(", "),
            crate::learner::explain::command(last, score.track)
        ),
        _ => String::new(),
    }
}

/// The files a compile error is in, from the compiler's `--> file:line:col`
/// lines, each once, in the order it names them.
pub fn compile_error_files(problem: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for line in problem.lines() {
        let Some(place) = line.trim_start().strip_prefix("--> ") else {
            continue;
        };
        // `exercises/apply.rs:12:5`: the path before the line and column.
        let mut parts = place.trim().rsplitn(3, ':');
        let (Some(_), Some(_), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if !files.iter().any(|known| known == file) {
            files.push(file.to_owned());
        }
    }
    files
}

/// What the first failing claim means and where to look: when the build
/// failed, the files the compiler's error names, not the claim's.
fn first_failing(track: Track, first: &ClaimScore, run_problem: Option<&str>) -> String {
    let claim = first.claim;
    let named = run_problem.map(compile_error_files).unwrap_or_default();
    // The answer the failing step got, when it says which function
    // panicked or is unfinished, narrows the files to that one's.
    let got = first.first_failure.as_ref().map_or("", |(_, failure)| {
        failure
            .message
            .lines()
            .map(str::trim_start)
            .find_map(|line| line.strip_prefix("got:"))
            .unwrap_or("")
    });
    let files = if named.is_empty() {
        claim.files_for_step(track, got)
    } else {
        named
    };
    // The track's feature, and filters that select this track's tests of
    // the claim and no other track's.
    let alone = claim.test_command(track, first.tests.iter().map(String::as_str));
    let mut out = String::new();
    let _ = writeln!(out, "\nFirst failing claim: {} {}", claim.id, claim.text);
    let _ = writeln!(out, "  open:  {}", files.join(" and "));
    let _ = writeln!(out, "  alone: {alone}");
    let _ = writeln!(out, "  more:  {}", claim.hint_command(track));
    match (&first.first_failure, first.status) {
        (Some((test, failure)), _) => {
            let _ = writeln!(out, "  test:  {test}");
            let lines: Vec<&str> = failure.message.lines().collect();
            for line in lines.iter().take(QUOTED_LINES) {
                let _ = writeln!(out, "  | {line}");
            }
            if lines.len() > QUOTED_LINES {
                let _ = writeln!(out, "  | …");
            }
        }
        (None, Status::NoResult) if first.never_ran.is_some() => {
            let why = first.never_ran.map(NeverRan::no_result).unwrap_or_default();
            let _ = writeln!(out, "  {why}");
        }
        (None, Status::NoResult) if !first.missing.is_empty() || run_problem.is_some() => {
            let _ = writeln!(
                out,
                "  no result: its tests never reported (see above); a claim without a result is not a pass"
            );
        }
        _ => {}
    }
    out
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Grades this checkout, and prints the explanation of `what` (a lesson, or
/// one of its claims) on `track` if the lesson is at full marks there.
pub fn explain(what: &str, track: Track, options: &Options) -> Result<ExitCode, String> {
    let lesson = explain::lesson(what)
        .ok_or_else(|| format!("no lesson {what:?}: a lesson is named L1 to L8"))?;
    if !CLAIMS
        .iter()
        .any(|claim| claim.lesson() == lesson && claim.on(track) && claim.points > 0)
    {
        let others: Vec<String> = Track::ALL
            .into_iter()
            .filter(|other| {
                CLAIMS
                    .iter()
                    .any(|claim| claim.lesson() == lesson && claim.on(*other))
            })
            .map(|other| format!("`{}`", explain::command(lesson.id, other)))
            .collect();
        return Err(format!(
            "{} has no graded claim on {}; try {}",
            lesson.id,
            track.name(),
            others.join(" or ")
        ));
    }
    let graded = score(options, false)?;
    let score = graded
        .score
        .tracks
        .iter()
        .find(|score| score.track == track)
        .ok_or_else(|| format!("{} was not graded", track.name()))?;
    let (earned, total, full) = explain::points(score, lesson.id).unwrap_or_default();
    if !full {
        println!(
            "\n{} is not at full marks on {} yet ({earned}/{total} points): its reference \
             would give away what is left to find.\n`cargo grade{}` names its next failing claim; \
             once every claim of {} passes, `{}` shows the reference's lines beside yours.",
            lesson.id,
            track.name(),
            track.grade_flag(),
            lesson.id,
            explain::command(lesson.id, track)
        );
        return Ok(ExitCode::FAILURE);
    }
    let width = crate::learner::terminal::size().map(|(columns, _)| columns);
    print!(
        "\n{}",
        explain::render(&crate::engine::checkout::repository(), lesson, track, width)
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compile error is opened where the compiler says it is, not in
    /// every file the first failing claim judges.
    #[test]
    fn a_compile_error_names_its_own_file() {
        let problem = "the code does not compile, so no test ran: fix the first error\n\n\
                       error[E0425]: cannot find value `x` in this scope\n  \
                       --> exercises/apply.rs:31:5\n   |\n31 |     x\n   |     ^ not found\n\
                       note: see exercises/apply.rs:2:1\n";
        assert_eq!(compile_error_files(problem), ["exercises/apply.rs"]);
        let two = "  --> exercises/postgres/apply.rs:3:1\n  ::: api/src/pg.rs:10:4\n  \
                   --> exercises/postgres/apply.rs:9:1\n --> src/x.rs:1:2\n";
        assert_eq!(
            compile_error_files(two),
            ["exercises/postgres/apply.rs", "src/x.rs"]
        );
        assert!(compile_error_files("the build took longer than 600 s").is_empty());
    }

    /// A claim without a result because the code did not compile says so,
    /// not that its tests never reported (which reads like a hang).
    #[test]
    fn a_compile_error_is_why_no_claim_has_a_result() {
        let score = Score::nothing(Scope::default(), NeverRan::DidNotCompile);
        let track = &score.tracks[0];
        let first = track.first_not_passing().expect("no claim passes");
        let problem = "the code does not compile, so no test ran\n  --> exercises/apply.rs:3:1";
        let told = first_failing(track.track, first, Some(problem));
        assert!(
            told.contains("no result: your code did not compile, see the compiler's message above"),
            "{told}"
        );
        assert!(!told.contains("never reported"), "{told}");
    }
}
