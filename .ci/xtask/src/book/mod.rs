//! `cargo book` (`cargo xtask book`): writes the parts of the book (`book/src/`) and the README
//! that are read off the lab itself, so that they cannot drift from it, and
//! draws the key scenes of the lessons (`book/src/runs/`) from a run of the
//! reference: `cargo run --features solutions,etcd -- --runs` plays each scene on
//! a fresh lab and prints the lab's events, which the class report's own
//! diagram module draws.
//!
//! A generated part sits between two HTML comments, invisible on a code
//! host and in mdBook alike:
//!
//! - a block: `<!-- generated: claims L4 -->` … `<!-- end generated -->`,
//!   where the kind is `claims` (the lesson's claims and their tests),
//!   `story` (the lesson's committed transcript), `pitfalls` (the committed
//!   mutants that lose a claim of the lesson) or `lessons` (every lesson,
//!   its claims and points, one line each);
//! - a number in running text: `<!-- n: tests-sqlite -->85<!-- /n -->`
//!   (or a short list: `sqlite-only`, the claims no server track runs);
//! - a sample screen: `<!-- sample: class mutant-ge-instead-of-eq -->`
//!   before a fenced block, whose points and bars are written from that row
//!   of the class's gradebook (the rest of the block is the text's own).
//!
//! Sources: the claim catalogue (`staff/claims/`), the committed snapshots under
//! `tests/lab/`, the classes' gradebooks (`staff/class*/gradebook.csv`), and
//! the test binaries' `--list` output, given as files (`--list FILE`, once
//! per build: the SQLite tests, with `postgres`, with `etcd`).
//!
//! `cargo book --list … --check` writes nothing and exits 1 if a file would
//! change (CI runs it); without `--check` it rewrites the files.
//!
//! The parts: `lab`, what the lab says (tests, transcripts, gradebooks);
//! `blocks`, a page's generated blocks and numbers; `samples`, the sample
//! screens; `diagram` (the report's), the scenes' pictures.

mod blocks;
mod lab;
mod samples;

// A run drawn as a sequence diagram: the class report's module.
use grader::instructor::html::diagram;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use blocks::fill;
use lab::Lab;

/// The files whose generated parts this writes, from the checkout's root.
const PAGES: &str = "book/src";
/// Where the key scenes' pictures go, one `CLAIM.svg` each.
const RUNS: &str = "book/src/runs";
/// The benchmark's committed chart, and its copy in the book.
const CHART: (&str, &str) = (
    "staff/bench/results/throughput.svg",
    "book/src/throughput.svg",
);

/// `cargo book ARGS` (`cargo xtask book ARGS`).
pub fn run(args: &[String]) -> ExitCode {
    match generate(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("book: {error}");
            ExitCode::from(2)
        }
    }
}

fn generate(args: &[String]) -> Result<bool, String> {
    let mut lists = Vec::new();
    let mut check = false;
    let mut args = args.iter().cloned();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--list" => lists
                .push(PathBuf::from(args.next().ok_or(
                    "--list takes a file: a test binary's --list output",
                )?)),
            "-h" | "--help" => {
                println!(
                    "usage: cargo book --list FILE [--list FILE]... [--check]\n\n\
                     rewrites the generated parts of book/src/*.md and README.md,\n\
                     book/src/sequence.svg and book/src/throughput.svg; --check writes\n\
                     nothing and fails if one would change"
                );
                return Ok(true);
            }
            other => return Err(format!("unknown argument {other:?}; see --help")),
        }
    }
    let root = crate::checkout();
    let lab = Lab::read(&root, &lists)?;

    let mut files: Vec<PathBuf> = vec![root.join("README.md")];
    let mut pages: Vec<PathBuf> = Vec::new();
    find_files(&root.join(PAGES), "md", &mut pages)?;
    pages.sort();
    files.extend(pages);

    let mut same = true;
    for file in &files {
        let old = fs::read_to_string(file)
            .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
        let new = fill(&old, &lab).map_err(|error| format!("{}: {error}", file.display()))?;
        same &= write_or_compare(&root, file, &old, &new, check)?;
    }
    let runs = scene_runs(&root)?;
    for (claim, shows, line) in &runs {
        let picture = root.join(RUNS).join(format!("{claim}.svg"));
        let old = fs::read_to_string(&picture).unwrap_or_default();
        let new = diagram::svg(line, &format!("{claim}: {shows}"))
            .ok_or_else(|| format!("the run of {claim}'s scene draws nothing"))?;
        same &= write_or_compare(&root, &picture, &old, &new, check)?;
    }
    // The benchmark's chart, as the benchmark last drew it.
    let chart = root.join(CHART.1);
    let old = fs::read_to_string(&chart).unwrap_or_default();
    let new = fs::read_to_string(root.join(CHART.0))
        .map_err(|error| format!("cannot read {}: {error}", CHART.0))?;
    same &= write_or_compare(&root, &chart, &old, &new, check)?;
    if check && same {
        println!(
            "the book's and the README's generated parts match the lab ({} files)",
            files.len() + runs.len() + 1
        );
    }
    Ok(same)
}

/// The key scenes' runs, played against the reference: each one's claim,
/// what it shows, and its events as one line.
fn scene_runs(root: &Path) -> Result<Vec<(String, String, String)>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(root)
        .args([
            "run",
            "--quiet",
            "--package",
            "fencing-lab",
            "--features",
            // The etcd track draws L7.1 too (its cluster is Debian's etcd).
            "solutions,etcd",
        ])
        .args(["--bin", "lab", "--", "--runs"])
        .output()
        .map_err(|error| format!("cannot run the lab's --runs: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "the lab's --runs failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let mut fields = line.splitn(3, '\t').map(str::to_owned);
            match (fields.next(), fields.next(), fields.next()) {
                (Some(claim), Some(shows), Some(run)) => Ok((claim, shows, run)),
                _ => Err(format!("the lab's --runs printed {line:?}")),
            }
        })
        .collect()
}

fn write_or_compare(
    root: &Path,
    file: &Path,
    old: &str,
    new: &str,
    check: bool,
) -> Result<bool, String> {
    if old == new {
        return Ok(true);
    }
    let shown = file.strip_prefix(root).unwrap_or(file).display();
    if check {
        let line = old
            .lines()
            .zip(new.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| old.lines().count().min(new.lines().count()));
        eprintln!(
            "{shown} differs from what `cargo book` writes, from line {}: run .ci/book and commit",
            line + 1
        );
        Ok(false)
    } else {
        if let Some(folder) = file.parent() {
            fs::create_dir_all(folder)
                .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
        }
        fs::write(file, new).map_err(|error| format!("cannot write {shown}: {error}"))?;
        println!("wrote {shown}");
        Ok(true)
    }
}

/// Every file under `dir` whose name ends in `.extension`, at any depth.
fn find_files(dir: &Path, extension: &str, into: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        fs::read_dir(dir).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_files(&path, extension, into)?;
        } else if path.extension().is_some_and(|found| found == extension) {
            into.push(path);
        }
    }
    Ok(())
}
