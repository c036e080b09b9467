//! `cargo grade`: the learner's scorecard, or, with `--submissions DIR --out
//! OUTDIR`, a whole class graded for an instructor (or one shard of it, and
//! `--merge` for the shards). See `--help`, and the book's chapter on grading
//! (`book/src/instructors.md`).
//!
//! The grader is a package of its own, so the learner's build never compiles
//! or links it, and it does not link the lab either: it links the claim
//! catalogue (the package `lab-claims` in `staff/claims/`, the lab's
//! `fencing_lab::claims`) and defines no claim or point of its own. A learner's code that does not
//! compile still gets a scorecard.
//!
//! # Layout
//!
//! Three parts, each a folder named for whom it serves:
//!
//! - `engine`: how a submission is built, run in the sandbox, judged and
//!   scored, and its source reviewed; both audiences go through it.
//! - `learner`: the learner's commands (the scorecard and its report, the
//!   watch mode, hints, explain, reset).
//! - `instructor`: a class graded in batch, its gradebook and report, and
//!   the course platforms (GitHub Classroom, Gradescope).
//!
//! `cli` reads the command line and hands it to one of them. Each folder's
//! `mod.rs` lists its modules.
//!
//! The binary (`src/main.rs`) only calls [`run`]. The book's generator,
//! `cargo book` (`.ci/xtask/src/book/`), draws with the report's diagram
//! module and the watch screen's lesson line through this library.
//! `cargo xtask circles` keeps the arrows between these modules one way.

pub mod cli;
pub mod engine;
pub mod instructor;
pub mod learner;

use std::process::ExitCode;

use engine::score;
use instructor::{class, classroom, output, report};
use learner::{hint, reset, scorecard, watch};

/// `cargo grade` with the arguments it was given: parses them and runs the
/// mode they ask for.
pub fn run() -> ExitCode {
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
