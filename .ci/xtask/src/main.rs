//! `cargo xtask`: the maintainers' checks that are programs.
//!
//! - `book --list FILE... [--check]`: the book's and the README's
//!   generated parts, written or checked (`book/`); `cargo book` for short.
//! - `circles [SRC...]`: no import circles between the modules of a crate
//!   (`circles.rs`).
//! - `premises DIR...`: every hint a graded run showed holds its premise
//!   on its step (`premises.rs`).
//! - `reference-runs [--write] FILE...`: the reference's runs a report
//!   draws beside a failure's, gathered from the suite's and checked
//!   (`reference_runs.rs`).
//! - `regenerate [--regrade]`: every file the lab derives from its claims,
//!   tests and scenes, written again: the one command after a claim
//!   changes (`regenerate.rs`).

mod book;
mod circles;
mod premises;
mod reference_runs;
mod regenerate;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask book --list FILE... [--check] | circles [SRC...] | premises DIR...\n       \
     | reference-runs [--write] FILE... | regenerate [--regrade]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("book") => book::run(&args[1..]),
        Some("circles") => circles::run(&args[1..]),
        Some("premises") => premises::run(&args[1..]),
        Some("reference-runs") => reference_runs::run(&args[1..]),
        Some("regenerate") => regenerate::run(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("xtask: {USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The lab's checkout, which the checks' folders are named from.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir`, sorted; a link is not followed.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let entries =
            fs::read_dir(&folder).map_err(|error| format!("{}: {error}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|error| error.to_string())?;
            let kind = entry.file_type().map_err(|error| error.to_string())?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    Ok(found)
}
