//! The learner's scorecard: this checkout's exercises (or the reference,
//! when the grader itself was built with `--features solutions`), graded
//! claim by claim, with the total on a line of its own (`Points X/Y`, for a
//! classroom's grading step to read) and the first failing claim's hint.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use fencing_lab::claims::LESSONS;

use crate::score::{ClaimScore, Score, Status};
use crate::suite::{Built, Suite, Trouble};

/// How many lines of a failing test's message the scorecard quotes.
const QUOTED_LINES: usize = 16;

/// Builds and runs this checkout's suite and prints the scorecard. Exits 0
/// only when every claim passes.
pub fn grade(test_limit: Duration, build_limit: Duration) -> Result<ExitCode, String> {
    let suite = Suite {
        dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        target_dir: None,
        solutions: cfg!(feature = "solutions"),
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

/// The scorecard as text.
fn render(score: &Score, problem: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nScorecard: {}", fencing_lab::IMPLEMENTATION);
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
    let _ = writeln!(out, "\nPoints {}/{}", score.earned(), score.total());
    match score.first_not_passing() {
        None => {
            let _ = writeln!(out, "\nEvery claim passes.");
        }
        Some(first) => out.push_str(&first_failing(first, problem.is_some())),
    }
    out
}

/// What the first failing claim means and where to look.
fn first_failing(first: &ClaimScore, run_problem: bool) -> String {
    let claim = first.claim;
    let mut out = String::new();
    let _ = writeln!(out, "\nFirst failing claim: {} {}", claim.id, claim.text);
    let _ = writeln!(out, "  hint:  {}", claim.hint);
    let _ = writeln!(out, "  open:  {}", claim.files.join(" and "));
    let _ = writeln!(out, "  alone: cargo test {}", claim.test_prefix());
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
