//! `cargo grade --gradescope FILE`: this checkout's scorecard, also written
//! to FILE in the format Gradescope's autograder reads from
//! `/autograder/results/results.json`.
//!
//! One test per claim and graded track, in the scorecard's order: `name` is
//! the claim's id and sentence (prefixed with the track's name off SQLite,
//! as in the class's `results.json`), `score` what it earned, `max_score`
//! its points (0 for the load test, which is checked, not graded), `status`
//! `passed` or `failed` (a claim without a result is not a pass), and
//! `output` the failing tests, the first failure as the test printed it
//! (step, expected, got, the file to open and the hint's first level) and
//! what the code printed before it. The top `output` is the scorecard;
//! everything is `visible`, hints included.
//!
//! A submission whose source names what `staff/grader/allowlist.txt` does not
//! have is on hold, as in a class: a test `Review: on hold` at 0 points
//! lists the lines, and the top `score` is 0 until an instructor has read
//! them (Gradescope's manual score override stands in for `--accept`). The
//! claims still show what they earned. Without a hold, `score` is the sum of
//! the tests' scores.
//!
//! The autograder that runs this is built by `staff/autograders/gradescope/make-zip`
//! (see the book's chapter for instructors).

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use crate::engine::libtest::cut_at_boundary;
use crate::engine::score::Graded;
use crate::engine::score::{ClaimScore, Status};
use lab_claims::Track;

/// The characters of a test's printed output kept in its `output`.
const PRINTED_CHARS: usize = 2000;

/// Where `--gradescope` writes, and when the grading started (its
/// `execution_time`).
#[derive(Debug, Clone)]
pub struct Target {
    /// The file to write.
    pub path: PathBuf,
    /// When the command line asked for it.
    pub started: Instant,
}

impl Target {
    /// Writing to `path`, the grading starting now.
    pub fn new(path: PathBuf) -> Target {
        Target {
            path,
            started: Instant::now(),
        }
    }

    /// Writes the results of `graded` to the file: `scorecard` is the text
    /// the scorecard printed.
    pub fn write(&self, graded: &Graded, scorecard: &str) -> Result<(), String> {
        let mut results = results(graded, scorecard);
        results["execution_time"] = json!(self.started.elapsed().as_secs());
        let mut text = serde_json::to_string_pretty(&results)
            .map_err(|error| format!("cannot write the results as JSON: {error}"))?;
        text.push('\n');
        std::fs::write(&self.path, text)
            .map_err(|error| format!("cannot write {}: {error}", self.path.display()))
    }
}

/// The results in Gradescope's fields.
pub fn results(graded: &Graded, scorecard: &str) -> Value {
    let mut tests: Vec<Value> = graded
        .score
        .tracks
        .iter()
        .flat_map(|track| {
            track
                .claims
                .iter()
                .map(|claim| test(track.track, claim, graded.problem.as_deref()))
        })
        .collect();
    let earned: u32 = graded.score.tracks.iter().map(|track| track.earned()).sum();
    let held = !graded.held.is_empty();
    let mut top = String::new();
    if let Some(why) = &graded.unsandboxed {
        top.push_str(&format!("Graded without the sandbox ({why}).\n"));
    }
    if held {
        let mut lines = String::from(
            "Your code names what the grader's allowlist (staff/grader/allowlist.txt) does not have, \
             so it is on hold: your points count once your instructor has read these lines.\n",
        );
        for flag in &graded.held {
            lines.push_str(&format!("  {flag}\n"));
        }
        top.push_str(&format!("ON HOLD. {lines}"));
        tests.push(json!({
            "name": "Review: on hold",
            "score": 0,
            "max_score": 0,
            "status": "failed",
            "output": lines,
            "visibility": "visible",
        }));
    }
    top.push_str(scorecard.trim_start_matches('\n'));
    json!({
        "score": if held { 0 } else { earned },
        "output": top,
        "output_format": "text",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
    })
}

/// One claim's test entry.
fn test(track: Track, score: &ClaimScore, problem: Option<&str>) -> Value {
    let claim = score.claim;
    let prefix = match track {
        Track::Sqlite => String::new(),
        _ => format!("{}: ", track.name()),
    };
    let mut output = String::new();
    match score.status {
        Status::Pass => {}
        Status::Fail => {
            output.push_str(&format!("failed: {}\n", score.failed.join(", ")));
            if let Some((_, failure)) = &score.first_failure {
                if !failure.message.is_empty() {
                    output.push('\n');
                    output.push_str(&failure.message);
                    output.push('\n');
                }
                if !failure.output.trim().is_empty() {
                    let kept = cut_at_boundary(&failure.output, PRINTED_CHARS);
                    output.push_str("\nwhat the code printed before it:\n");
                    output.push_str(kept);
                    if kept.len() < failure.output.len() {
                        output.push_str("\n[cut]");
                    }
                    output.push('\n');
                }
            }
            // The failure names the command for more of its hint; say it
            // where it did not.
            let command = claim.hint_command(track);
            if !output.contains(&command) {
                output.push_str(&format!("\nmore: {command}\n"));
            }
        }
        Status::NoResult if score.missing.is_empty() => match (score.never_ran, problem) {
            (Some(why), _) => {
                output.push_str(&format!(
                    "no result: {}, see the scorecard above\n",
                    why.what()
                ));
            }
            (None, Some(_)) => output.push_str("not run: see the scorecard above\n"),
            (None, None) => output.push_str("no result: the suite has no test for this claim\n"),
        },
        Status::NoResult => output.push_str(&format!(
            "no result: {} of its tests never reported ({}); a claim without a result is not a \
             pass\n",
            score.missing.len(),
            score.missing.join(", ")
        )),
    }
    if claim.points == 0 {
        output.push_str("worth 0 points: checked, not graded\n");
    }
    json!({
        "name": format!("{prefix}{} {}", claim.id, claim.text),
        "score": score.earned,
        "max_score": claim.points,
        "status": if score.status == Status::Pass { "passed" } else { "failed" },
        "output": output,
        "tags": [claim.lesson().id, track.key()],
        "visibility": "visible",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::score::Score;

    fn graded(held: Vec<crate::engine::review::Flag>) -> Graded {
        Graded {
            score: Score::nothing(
                crate::engine::score::Scope::default(),
                crate::engine::score::NeverRan::DidNotCompile,
            ),
            problem: Some("the code does not compile".to_owned()),
            unsandboxed: None,
            held,
            solutions: false,
        }
    }

    #[test]
    fn a_test_per_claim_with_its_points() {
        let results = results(&graded(Vec::new()), "\nScorecard\n\nPoints 0/35\n");
        let tests = results["tests"].as_array().unwrap();
        let max: u64 = tests.iter().map(|t| t["max_score"].as_u64().unwrap()).sum();
        assert_eq!(max, u64::from(lab_claims::total_points()));
        assert!(tests.iter().all(|t| t["status"] == "failed"));
        assert!(tests.iter().all(|t| t["visibility"] == "visible"));
        assert_eq!(results["score"], 0);
        assert!(results["output"].as_str().unwrap().starts_with("Scorecard"));
    }

    #[test]
    fn a_hold_is_a_test_at_zero_and_withholds_the_score() {
        let flag = crate::engine::review::Flag {
            file: "exercises/apply.rs".to_owned(),
            line: 3,
            what: "std::fs".to_owned(),
            text: "std::fs::read(\"x\")".to_owned(),
        };
        let results = results(&graded(vec![flag]), "Points 0/35\n");
        let tests = results["tests"].as_array().unwrap();
        let hold = tests.last().unwrap();
        assert_eq!(hold["name"], "Review: on hold");
        assert_eq!(
            (hold["score"].as_u64(), hold["max_score"].as_u64()),
            (Some(0), Some(0))
        );
        assert!(
            hold["output"]
                .as_str()
                .unwrap()
                .contains("exercises/apply.rs:3: std::fs")
        );
        assert!(results["output"].as_str().unwrap().starts_with("ON HOLD."));
        assert_eq!(results["score"], 0);
    }
}
