//! `regenerate [--regrade]`: writes again every file the lab derives from
//! its claims, tests and scenes: the one command after adding or changing
//! a claim (the recipe is in `book/src/maintainers.md`). In this order,
//! since each part reads what the one before wrote:
//!
//! 1. the transcripts' snapshots, on each track (insta,
//!    `tests/lab/**/snapshots`);
//! 2. the reference's run of every step
//!    (`staff/grader/reference-runs.tsv`), which a failure's report draws
//!    beside the learner's: the suite run against the reference on SQLite,
//!    PostgreSQL and the SQL functions, each step's run written down, then
//!    gathered ([`crate::reference_runs`]);
//! 3. the committed classes' gradebooks (`staff/class*/gradebook.csv`):
//!    the columns of claims a gradebook lacks, graded on those claims alone
//!    and added (`cargo grade --fill`); with `--regrade`, every class
//!    graded whole, as after changing what a test checks;
//! 4. the GitHub Classroom workflow (`staff/autograders/classroom.yml`);
//! 5. the book's and the README's generated parts (`.ci/book --write`).
//!
//! It needs what the tracks need: PostgreSQL's initdb, etcd and protoc
//! (`.ci/run` installs them). What it cannot derive is checked elsewhere:
//! the hand-written hints (`.ci/hints-match`, `cargo xtask premises`) and
//! prose.

use std::fs;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Each track's transcripts: its features and the tests that write them.
const TRANSCRIPTS: [(&str, &str); 4] = [
    ("solutions", "transcripts::"),
    ("solutions,postgres", "postgres::transcript::"),
    ("solutions,postgres-sql", "postgres_sql::transcript::"),
    ("solutions,etcd", "l7_etcd::transcript::"),
];

/// The tracks whose steps have runs: a name, the features, the tests.
const RUNS: [(&str, &str, Option<&str>); 3] = [
    ("sqlite", "solutions", None),
    ("postgres", "solutions,postgres", Some("postgres::")),
    (
        "postgres-sql",
        "solutions,postgres-sql",
        Some("postgres_sql::"),
    ),
];

/// The committed classes and the flag that grades each.
const CLASSES: [(&str, Option<&str>); 4] = [
    ("staff/class", None),
    ("staff/class-postgres", Some("--postgres")),
    ("staff/class-postgres-sql", Some("--postgres-sql")),
    ("staff/class-etcd", Some("--etcd")),
];

pub fn run(args: &[String]) -> ExitCode {
    let regrade = match args {
        [] => false,
        [flag] if flag == "--regrade" => true,
        _ => {
            eprintln!("xtask: usage: cargo xtask regenerate [--regrade]");
            return ExitCode::from(2);
        }
    };
    match regenerate(&crate::checkout(), regrade) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: regenerate: {error}");
            ExitCode::FAILURE
        }
    }
}

fn regenerate(root: &Path, regrade: bool) -> Result<(), String> {
    let mut step = Steps(None);
    step.next("1. the transcripts' snapshots");
    for (features, filter) in TRANSCRIPTS {
        // insta writes a changed snapshot in place, even where CI is set.
        let mut test = cargo(root, &["test", "--quiet", "--features", features]);
        test.args(["--test", "lab", "--", filter])
            .env("INSTA_UPDATE", "always")
            .env("INSTA_FORCE_PASS", "1");
        quietly(test)?;
        println!("written: {filter} (--features {features})");
    }

    step.next("2. the reference's runs, which a failure's report draws beside the learner's");
    let runs = root.join("target/regenerate/runs");
    let _ = fs::remove_dir_all(&runs);
    fs::create_dir_all(&runs).map_err(|error| format!("{}: {error}", runs.display()))?;
    let mut written = Vec::new();
    for (name, features, filter) in RUNS {
        let file = runs.join(format!("{name}.tsv"));
        let mut test = cargo(root, &["test", "--quiet", "--features", features]);
        test.args(["--test", "lab", "--"])
            .args(filter)
            .env("FENCING_LAB_REFERENCE_RUNS", &file);
        quietly(test)?;
        written.push(file.display().to_string());
    }
    let mut gather = vec!["--write".to_owned()];
    gather.extend(written);
    if crate::reference_runs::run(&gather) != ExitCode::SUCCESS {
        return Err("the reference's runs were not gathered".to_owned());
    }

    step.next("3. the classes' gradebooks");
    for (class, flag) in CLASSES {
        let name = class.trim_start_matches("staff/");
        let out = root.join("target/regenerate").join(name);
        let _ = fs::remove_dir_all(&out);
        let gradebook = format!("{class}/gradebook.csv");
        let mut grade = cargo(root, &["grade"]);
        grade
            .args(flag)
            .args(["--submissions", class])
            .arg("--out")
            .arg(&out);
        if !regrade {
            grade.args(["--fill", &gradebook]);
        }
        quietly(grade)?;
        fs::copy(out.join("gradebook.csv"), root.join(&gradebook))
            .map_err(|error| format!("{gradebook}: {error}"))?;
        println!("written: {gradebook}");
    }

    step.next("4. the GitHub Classroom workflow");
    let workflow = "staff/autograders/classroom.yml";
    let output = cargo(root, &["grade", "--classroom"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("cannot run cargo grade --classroom: {error}"))?;
    if !output.status.success() {
        return Err("cargo grade --classroom failed".to_owned());
    }
    fs::write(root.join(workflow), output.stdout)
        .map_err(|error| format!("{workflow}: {error}"))?;
    println!("written: {workflow}");

    step.next("5. the book's and the README's generated parts");
    let mut book = Command::new("bash");
    book.current_dir(root).args([".ci/book", "--write"]);
    let status = book
        .status()
        .map_err(|error| format!("cannot run .ci/book: {error}"))?;
    if !status.success() {
        return Err(".ci/book --write failed".to_owned());
    }
    step.end();
    Ok(())
}

/// The steps' heads, each with the time the one before took.
struct Steps(Option<Instant>);

impl Steps {
    fn next(&mut self, what: &str) {
        self.end();
        println!("\n== {what}");
        self.0 = Some(Instant::now());
    }

    fn end(&self) {
        if let Some(started) = self.0 {
            println!("   (took {} s)", started.elapsed().as_secs());
        }
    }
}

/// `cargo ARGS`, run in the checkout.
fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root).args(args);
    command
}

/// Runs `command` with its output dropped and its errors shown; fails if it
/// does.
fn quietly(mut command: Command) -> Result<(), String> {
    let status = command
        .stdout(Stdio::null())
        .status()
        .map_err(|error| format!("cannot run {command:?}: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}
