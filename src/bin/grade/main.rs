//! `cargo run --bin grade`: the learner's scorecard, or, with
//! `--submissions DIR --out OUTDIR`, a whole class graded for an instructor.
//! See `--help`, and the README's grading sections.
//!
//! The grader lives in this binary, not in the library, so the learner's
//! crate stays small. It reads claims and points from
//! `fencing_lab::claims` and defines none of its own.
//!
//! # Layout
//!
//! - `cli`: the command line.
//! - `scorecard`: no arguments, this checkout's scorecard.
//! - `class`: batch grading, one scratch copy for a whole class.
//! - `suite`: building the graded suite and running its test binary.
//! - `process`: a child process with a time limit and bounded output.
//! - `libtest`: libtest's human output, parsed as it streams.
//! - `score`: verdicts to claims and points.
//! - `flags`: review flags in a submission's source.
//! - `report`: gradebook, results.json, summary, `--expect`.

mod class;
mod cli;
mod flags;
mod libtest;
mod process;
mod report;
mod score;
mod scorecard;
mod suite;

use std::process::ExitCode;

fn main() -> ExitCode {
    let result = match cli::parse(std::env::args_os().skip(1)) {
        Ok(cli::Mode::Help) => {
            print!("{}", cli::USAGE);
            Ok(ExitCode::SUCCESS)
        }
        Ok(cli::Mode::Checkout {
            test_limit,
            build_limit,
        }) => scorecard::grade(test_limit, build_limit),
        Ok(cli::Mode::Class(options)) => class::grade(&options),
        Err(usage) => {
            eprintln!("grade: {usage}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    result.unwrap_or_else(|error| {
        eprintln!("grade: {error}");
        ExitCode::from(2)
    })
}
