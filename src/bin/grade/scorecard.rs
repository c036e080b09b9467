//! The learner's scorecard: this checkout's exercises (or the reference,
//! when the grader itself was built with `--features solutions`), graded
//! claim by claim, with the total on a line of its own (`Points X/Y`, for a
//! classroom's grading step to read) and the first failing claim's hint.
//!
//! Built with `--features postgres`, the grader grades the PostgreSQL track
//! too: the SQLite section comes first, as without the feature, then a
//! section of the same shape for `exercises/postgres/`, whose total reads
//! `Points on PostgreSQL X/Y` so that the line `Points X/Y` stays SQLite's.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use fencing_lab::claims::{LESSONS, Track};

use crate::score::{ClaimScore, Score, Status, TrackScore};
use crate::suite::{Built, Suite, Trouble};

/// How many lines of a failing test's message the scorecard quotes.
const QUOTED_LINES: usize = 16;

/// Builds and runs this checkout's suite and prints the scorecard. Exits 0
/// only when every claim passes, on every graded track.
pub fn grade(test_limit: Duration, build_limit: Duration) -> Result<ExitCode, String> {
    let suite = Suite {
        dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        target_dir: None,
        solutions: cfg!(feature = "solutions"),
        postgres: cfg!(feature = "postgres"),
        interactive: true,
        tmp_dir: None,
        build_limit,
        test_limit,
    };
    let (score, problem) = match suite.build()? {
        Built::Executable { path, .. } => {
            let ran = suite.run(&path)?;
            let problem = ran.problem.map(|(trouble, problem)| {
                let advice = match trouble {
                    Trouble::TimedOut => "look for a loop, or a wait, that never ends",
                    Trouble::EndedEarly => {
                        "something ended the test process: process::exit, abort, or a crash"
                    }
                    Trouble::Garbled => "print less, or not at all, from your functions",
                };
                format!("{problem}.\nA claim without a result is a FAIL: {advice}.")
            });
            (ran.score, problem)
        }
        Built::CompileError(first) => {
            // The exercises compiled already (this binary links them), so
            // what fails here is the graded suite in tests/lab.
            let mut problem = String::from(
                "the graded suite does not build: fix the first error cargo printed above, \
                 then run `cargo run --bin grade` again",
            );
            if !first.is_empty() {
                problem = format!("{problem}\n{first}");
            }
            (Score::nothing(), Some(problem))
        }
        Built::TimedOut(limit) => (
            Score::nothing(),
            Some(format!(
                "the build took longer than {} s and was stopped",
                limit.as_secs()
            )),
        ),
        Built::Failed(reason) => return Err(reason),
    };
    print!("{}", render(&score, problem.as_deref()));
    Ok(if score.full_marks() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The scorecard as text: a section per graded track. The run's problem,
/// which concerns every track, is told in the first.
fn render(score: &Score, problem: Option<&str>) -> String {
    let mut out = String::new();
    for (index, track) in score.tracks.iter().enumerate() {
        let told = if index == 0 { problem } else { None };
        out.push_str(&render_track(track, told, problem.is_some()));
    }
    out
}

/// One track's section.
fn render_track(score: &TrackScore, problem: Option<&str>, run_problem: bool) -> String {
    let mut out = String::new();
    let (heading, points) = match score.track {
        Track::Sqlite => ("Scorecard", "Points"),
        Track::Postgres => ("Scorecard on PostgreSQL", "Points on PostgreSQL"),
    };
    let _ = writeln!(out, "\n{heading}: {}", implementation(score.track));
    for lesson in LESSONS {
        let _ = writeln!(out, "\n{} {}", lesson.id, lesson.title);
        for claim in score
            .claims
            .iter()
            .filter(|c| c.claim.lesson().id == lesson.id)
        {
            let _ = writeln!(
                out,
                "  {:<5} {}  {}/{}  {}",
                claim.claim.id,
                if claim.status == Status::Pass {
                    "pass"
                } else {
                    "FAIL"
                },
                claim.earned,
                claim.claim.points,
                claim.claim.text
            );
        }
    }
    if let Some(problem) = problem {
        let _ = writeln!(out, "\n{}", capitalized(problem));
    }
    let _ = writeln!(out, "\n{points} {}/{}", score.earned(), score.total());
    match score.first_not_passing() {
        None => {
            let _ = writeln!(out, "\nEvery claim passes.");
        }
        Some(first) => out.push_str(&first_failing(score.track, first, run_problem)),
    }
    out
}

/// What the track's section grades: the exercises, or the reference.
fn implementation(track: Track) -> &'static str {
    match track {
        Track::Sqlite => fencing_lab::IMPLEMENTATION,
        Track::Postgres if cfg!(feature = "solutions") => "the reference (solutions/postgres/)",
        Track::Postgres => "your exercises (exercises/postgres/)",
    }
}

/// What the first failing claim means and where to look.
fn first_failing(track: Track, first: &ClaimScore, run_problem: bool) -> String {
    let claim = first.claim;
    let files: Vec<String> = claim
        .files
        .iter()
        .map(|file| track.exercise_file(file))
        .collect();
    // The claim's prefix selects its tests on every track the build has.
    let features = match track {
        Track::Sqlite => "",
        Track::Postgres => "--features postgres ",
    };
    let mut out = String::new();
    let _ = writeln!(out, "\nFirst failing claim: {} {}", claim.id, claim.text);
    let _ = writeln!(out, "  hint:  {}", claim.hint_on(track));
    let _ = writeln!(out, "  open:  {}", files.join(" and "));
    let _ = writeln!(out, "  alone: cargo test {features}{}", claim.test_prefix());
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
        (None, Status::NoResult) if !first.missing.is_empty() || run_problem => {
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
