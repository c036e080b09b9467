//! The command line: no arguments for a learner's scorecard, or
//! `--submissions DIR --out OUTDIR` for a class.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::class;

/// The help text.
pub const USAGE: &str = "\
grade: the fencing-lab grader

usage:
  cargo run --bin grade
      grade this checkout's exercises and print a scorecard
      (with --features solutions: the reference)
  cargo run --bin grade -- --submissions DIR --out OUTDIR [--timeout SECS] [--expect FILE]
      grade a class: every folder of DIR is one submission, holding
      exercises/apply.rs and exercises/install_generation.rs, or the files alone

  with --features postgres, the PostgreSQL track is graded too, on its own:
  exercises/postgres/apply.rs and exercises/postgres/install_generation.rs
  (postgres/apply.rs and postgres/install_generation.rs beside the files alone)

options:
  --submissions DIR     the class, one folder per submission
  --out OUTDIR          where gradebook.csv, <submission>/results.json and the
                        reusable work folder (.work/) go
  --timeout SECS        the longest one test run may take (default 60)
  --build-timeout SECS  the longest one build may take (default 600)
  --expect FILE         compare gradebook.csv with FILE byte for byte; exit 1 if
                        they differ
  -h, --help            print this text
";

/// What to do.
#[derive(Debug)]
pub enum Mode {
    /// Print the help text.
    Help,
    /// Grade this checkout's exercises.
    Checkout {
        /// The test run's wall-clock limit.
        test_limit: Duration,
        /// The build's wall-clock limit.
        build_limit: Duration,
    },
    /// Grade a class.
    Class(class::Options),
}

/// Reads the arguments.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Mode, String> {
    use lexopt::prelude::*;

    let mut parser = lexopt::Parser::from_args(args);
    let (mut submissions, mut out, mut expect) = (None, None, None);
    let mut test_limit = Duration::from_secs(60);
    let mut build_limit = Duration::from_secs(600);
    while let Some(arg) = parser.next().map_err(message)? {
        match arg {
            Short('h') | Long("help") => return Ok(Mode::Help),
            Long("submissions") => {
                submissions = Some(PathBuf::from(parser.value().map_err(message)?))
            }
            Long("out") => out = Some(PathBuf::from(parser.value().map_err(message)?)),
            Long("expect") => expect = Some(PathBuf::from(parser.value().map_err(message)?)),
            Long("timeout") => test_limit = seconds(&mut parser, "--timeout")?,
            Long("build-timeout") => build_limit = seconds(&mut parser, "--build-timeout")?,
            _ => return Err(message(arg.unexpected())),
        }
    }
    match (submissions, out) {
        (Some(submissions), Some(out)) => Ok(Mode::Class(class::Options {
            submissions,
            out,
            test_limit,
            build_limit,
            expect,
        })),
        (Some(_), None) => {
            Err("--submissions needs --out OUTDIR: where to write the gradebook".to_owned())
        }
        (None, Some(_)) => Err("--out needs --submissions DIR: the class to grade".to_owned()),
        (None, None) if expect.is_some() => {
            Err("--expect needs --submissions DIR and --out OUTDIR".to_owned())
        }
        (None, None) => Ok(Mode::Checkout {
            test_limit,
            build_limit,
        }),
    }
}

/// A whole number of seconds, from one second to one day.
fn seconds(parser: &mut lexopt::Parser, flag: &str) -> Result<Duration, String> {
    const DAY: u64 = 24 * 60 * 60;
    let value = parser.value().map_err(message)?;
    let text = value.to_string_lossy();
    match text.parse::<u64>() {
        Ok(seconds) if (1..=DAY).contains(&seconds) => Ok(Duration::from_secs(seconds)),
        _ => Err(format!(
            "{flag} takes a whole number of seconds from 1 to {DAY}, not {text:?}"
        )),
    }
}

/// lexopt's messages start with a capital letter; ours do not.
fn message(error: lexopt::Error) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}
