//! `cargo grade`: the learner's scorecard, or, with `--submissions DIR --out
//! OUTDIR`, a whole class graded for an instructor (or one shard of it, and
//! `--merge` for the shards). See `--help`, and the book's chapter on grading
//! (`book/src/instructors.md`).
//!
//! The grader is a package of its own, so the learner's build never compiles
//! or links it, and it does not link the lab either: it links the claim
//! catalogue (the package `lab-claims` in `claims/`, the lab's
//! `fencing_lab::claims`) and defines no claim or point of its own. A learner's code that does not
//! compile still gets a scorecard.
//!
//! # Layout
//!
//! - `cli`: the command line.
//! - `checkout`: where the lab's checkout is.
//! - `scorecard`: no arguments, this checkout's scorecard (and the
//!   `--explain` command, which grades it first).
//! - `watch`: `--watch`, the scorecard again on every save, and its keys;
//!   `full_marks`, its views of a lesson at full marks and of a reset;
//!   `terminal`, the size it draws to; `bar`, a lesson's line on its
//!   screen (which `cargo book` includes too).
//! - `part`: `--lesson` and `--claim`, one part of the scorecard.
//! - `classroom`: `--classroom`, the GitHub Classroom workflow.
//! - `gradescope`: `--gradescope`, the scorecard in Gradescope's format.
//! - `hint`: `--hint`, the next level of a failing step's hint, and
//!   `--claims`, every claim's statement.
//! - `explain`: `--explain`, a lesson at full marks: the reference's lines
//!   (`reference`) beside the learner's, and its pitfalls (`pitfalls`).
//! - `reset`: `--reset`, an exercise file back to its stub.
//! - `class`: batch grading, one submission after the other; `fill`,
//!   `--fill`, a gradebook given the columns of claims added since.
//! - `submission`: which folders are submissions, and reading their files.
//! - `scratch`: the scratch copy of the lab a class is built in.
//! - `output`: the output folder: its place, its lock, its files, merging.
//! - `sandbox`: bubblewrap, around every build and test run; `accounts`,
//!   the pool of accounts it runs submissions as when started by root.
//! - `suite`: building the graded suite and running its test binary.
//! - `cache`: the dependencies a class's scratch copies share, built once.
//! - `verdicts`: the channel the tests' verdicts come through.
//! - `process`: a child process with a time limit and bounded output.
//! - `libtest`: libtest's human output, for what a failed test printed.
//! - `score`: verdicts to claims and points.
//! - `flags`: the review of a submission's source against
//!   `grader/allowlist.txt`, which puts it on hold.
//! - `report`: gradebook, results.json, summary, class rules, `--expect`.
//! - `html`: `index.html`, the class report.
//!
//! Beside it, `src/bin/book/` (`cargo book`) writes the book's and the
//! README's generated parts from the claim catalogue, and checks them.
//! `.ci/import-circles` keeps the arrows between these modules one way.

mod accounts;
mod bar;
mod cache;
mod checkout;
mod class;
mod classroom;
mod cli;
mod explain;
mod fill;
mod flags;
mod full_marks;
mod gradescope;
mod hint;
mod html;
mod libtest;
mod output;
mod part;
mod pitfalls;
mod process;
mod reference;
mod report;
mod reset;
mod sandbox;
mod score;
mod scorecard;
mod scratch;
mod submission;
mod suite;
mod terminal;
mod verdicts;
mod watch;

use std::process::ExitCode;

fn main() -> ExitCode {
    let result = match cli::parse(std::env::args_os().skip(1)) {
        Ok(cli::Mode::Help) => {
            print!("{}", cli::USAGE);
            Ok(ExitCode::SUCCESS)
        }
        Ok(cli::Mode::Checkout {
            options,
            gradescope,
        }) => scorecard::grade(&options, gradescope.as_ref()),
        Ok(cli::Mode::Watch(options)) => watch::run(&options),
        Ok(cli::Mode::Class(options)) => class::grade(&options),
        Ok(cli::Mode::Hint { what, level, track }) => hint::show(&what, level, track),
        Ok(cli::Mode::Claims) => Ok(hint::list_claims()),
        Ok(cli::Mode::Explain {
            what,
            track,
            options,
        }) => scorecard::explain(&what, track, &options),
        Ok(cli::Mode::Reset { file, yes }) => reset::run(&file, yes),
        Ok(cli::Mode::Classroom { by_lesson, tracks }) => Ok(classroom::print(tracks, by_lesson)),
        Ok(cli::Mode::Merge {
            shards,
            out,
            expect,
            tracks,
        }) => merge(&shards, &out, expect.as_deref(), tracks),
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

/// Merges shard outputs, then checks the class as a whole run would.
fn merge(
    shards: &[std::path::PathBuf],
    out: &std::path::Path,
    expect: Option<&std::path::Path>,
    tracks: score::Tracks,
) -> Result<ExitCode, String> {
    let (written, rows) = output::merge(shards, out, tracks)?;
    print!("{}", written.leftovers());
    println!(
        "merged {} shards, {} submissions: wrote {}, {} and their results.json files",
        shards.len(),
        rows.len(),
        written.gradebook.display(),
        written.index.display()
    );
    Ok(report::exit_status(&rows, &written.gradebook_bytes, expect))
}
