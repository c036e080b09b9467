//! `reference-runs [--write] FILE...`: gathers the runs the graded suite
//! wrote against the reference (`FENCING_LAB_REFERENCE_RUNS=FILE cargo test
//! --features solutions…`, a line per passed step) into
//! `staff/grader/reference-runs.tsv`, which a failure's report draws beside the
//! learner's run; without `--write`, checks that the file is what the runs
//! give.
//!
//! Kept: the tests in which more than one connection acts, where a
//! learner's failing step can show another connection's events; a test of
//! one connection has nothing to draw. Lines are sorted and each kept once,
//! so runs of the same test from several test binaries (every feature set
//! runs the SQLite tests) and several runs agree. A test whose runs differ
//! between two runs gives two lines for a step, and the check names it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::ExitCode;

/// Where the gathered runs live, from the checkout.
const GATHERED: &str = "staff/grader/reference-runs.tsv";

pub fn run(args: &[String]) -> ExitCode {
    let (write, files): (bool, Vec<&String>) = match args.first().map(String::as_str) {
        Some("--write") => (true, args[1..].iter().collect()),
        _ => (false, args.iter().collect()),
    };
    if files.is_empty() {
        eprintln!("xtask: usage: cargo xtask reference-runs [--write] FILE...");
        return ExitCode::from(2);
    }
    let mut lines = BTreeSet::new();
    for file in files {
        match fs::read_to_string(file) {
            Ok(text) => lines.extend(text.lines().map(str::to_owned)),
            Err(error) => {
                eprintln!("xtask: {file}: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let kept = match gather(&lines) {
        Ok(kept) => kept,
        Err(error) => {
            eprintln!("xtask: reference-runs: {error}");
            return ExitCode::FAILURE;
        }
    };
    let path = crate::checkout().join(GATHERED);
    let steps = kept.lines().count();
    let tests: BTreeSet<&str> = kept
        .lines()
        .filter_map(|line| line.split('\t').next())
        .collect();
    if write {
        if let Err(error) = fs::write(&path, &kept) {
            eprintln!("xtask: {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
        println!(
            "written: {GATHERED}, {steps} steps of {} tests",
            tests.len()
        );
        return ExitCode::SUCCESS;
    }
    let committed = fs::read_to_string(&path).unwrap_or_default();
    if committed != kept {
        let (old, new): (BTreeSet<&str>, BTreeSet<&str>) =
            (committed.lines().collect(), kept.lines().collect());
        for line in old.symmetric_difference(&new).take(5) {
            let shown: String = line.chars().take(160).collect();
            eprintln!("  {} {shown}", if new.contains(line) { "+" } else { "-" });
        }
        eprintln!(
            "{GATHERED} is not what the reference's runs give: run `cargo xtask regenerate` (its reference runs)"
        );
        return ExitCode::FAILURE;
    }
    println!(
        "{GATHERED} matches the reference's runs: {steps} steps of {} tests",
        tests.len()
    );
    ExitCode::SUCCESS
}

/// The lines of the tests in which more than one connection acts, sorted,
/// each once; an error names a step with two different runs.
fn gather(lines: &BTreeSet<String>) -> Result<String, String> {
    let mut actors: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut steps: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for line in lines.iter().filter(|line| !line.is_empty()) {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let [test, number, _, run] = fields[..] else {
            return Err(format!("not a line of a run: {line}"));
        };
        if let Some(other) = steps.insert((test, number), line) {
            return Err(format!(
                "step {number} of {test} ran two ways: the suite is not deterministic there\n  {other}\n  {line}"
            ));
        }
        // Every record's second field is its connection.
        let acting = actors.entry(test).or_default();
        acting.extend(run.split(';').filter_map(|record| record.split(',').nth(1)));
    }
    let mut kept = String::new();
    for line in lines {
        let test = line.split('\t').next().unwrap_or_default();
        if actors.get(test).is_some_and(|acting| acting.len() > 1) {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: &[&str]) -> BTreeSet<String> {
        lines.iter().map(|line| (*line).to_owned()).collect()
    }

    #[test]
    fn tests_of_one_connection_are_left_out_and_the_rest_sorted() {
        let lines = set(&[
            "b\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5",
            "b\t1\tinstall\tN,2,authority;C,2,install,fund-A,2",
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5",
        ]);
        let kept = gather(&lines).unwrap();
        assert_eq!(kept.lines().count(), 2);
        assert!(kept.starts_with("b\t0\t"));
    }

    #[test]
    fn a_step_that_ran_two_ways_is_named() {
        let lines = set(&[
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,applied,5",
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,contention",
        ]);
        let error = gather(&lines).unwrap_err();
        assert!(error.contains("step 0 of a ran two ways"), "{error}");
    }
}
