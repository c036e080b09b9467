//! `reference-runs [--write] FILE...`: gathers the runs the graded suite
//! wrote against the reference (`FENCING_LAB_REFERENCE_RUNS=FILE cargo test
//! --features solutions…`, a line per passed step) into
//! `staff/grader/reference-runs.tsv`, which a failure's report draws beside the
//! learner's run; without `--write`, checks that the file is what the runs
//! give.
//!
//! A step's run is the scene's events up to that step: each is the start
//! of the test's last one. The file keeps, per test, that last run once
//! (`TEST<TAB>run<TAB><TAB>RUN`) and each step's length in it
//! (`TEST<TAB>N<TAB>STEP<TAB>EVENTS`), of the tests in which more than one
//! connection acts: a test of one connection has nothing to draw. Runs of
//! the same test from several test binaries (every feature set runs the
//! SQLite tests) and several runs must agree: a step that ran two ways, or
//! a run that is not the start of its test's last one, is named.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::process::ExitCode;

use lab_claims::facts::{Event, wire};

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
    let steps = kept
        .lines()
        .filter(|line| !line.contains("\trun\t\t"))
        .count();
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

/// A step's name, its run's events, and its run's line.
type Step<'a> = (&'a str, Vec<Event>, &'a str);

/// The file's lines for the steps' lines: per test its last run and each
/// step's length in it, sorted, for the tests in which more than one
/// connection acts; an error names a step that ran two ways, or a run that
/// is not the start of its test's last one.
fn gather(lines: &BTreeSet<String>) -> Result<String, String> {
    let mut tests: BTreeMap<&str, BTreeMap<usize, Step<'_>>> = BTreeMap::new();
    for line in lines.iter().filter(|line| !line.is_empty()) {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let [test, number, step, run] = fields[..] else {
            return Err(format!("not a line of a run: {line}"));
        };
        let number: usize = number
            .parse()
            .map_err(|_| format!("not a step's number: {line}"))?;
        let (_, events) = wire::decode(run).ok_or_else(|| format!("not a run: {line}"))?;
        let steps = tests.entry(test).or_default();
        if let Some((_, _, other)) = steps.insert(number, (step, events, run)) {
            return Err(format!(
                "step {number} of {test} ran two ways: the suite is not deterministic there\n  {other}\n  {run}"
            ));
        }
    }
    let mut kept = String::new();
    for (test, steps) in &tests {
        let Some((_, (_, last, run))) = steps.iter().max_by_key(|(_, (_, events, _))| events.len())
        else {
            continue;
        };
        let actors: BTreeSet<usize> = last.iter().map(Event::actor).collect();
        if actors.len() < 2 {
            continue;
        }
        let _ = writeln!(kept, "{test}\trun\t\t{run}");
        for (number, (step, events, _)) in steps {
            if last.get(..events.len()) != Some(&events[..]) {
                return Err(format!(
                    "step {number} of {test}: its run is not the start of the test's last one"
                ));
            }
            let _ = writeln!(kept, "{test}\t{number}\t{step}\t{}", events.len());
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

    const INSTALL: &str = "N,2,authority;C,2,install,fund-A,2;A,2,installed";

    #[test]
    fn a_test_keeps_its_last_run_and_each_steps_length() {
        let lines = set(&[
            &format!("b\t0\tinstall\t{INSTALL}"),
            &format!("b\t1\tapply\t{INSTALL};N,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,stale,1,2"),
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,applied,5",
        ]);
        let kept = gather(&lines).unwrap();
        let kept: Vec<&str> = kept.lines().collect();
        // Test a has one connection: nothing to draw.
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert!(kept[0].starts_with("b\trun\t\tN,"), "{kept:?}");
        assert_eq!(kept[1], "b\t0\tinstall\t2");
        assert_eq!(kept[2], "b\t1\tapply\t4");
    }

    #[test]
    fn a_step_that_ran_two_ways_is_named() {
        let lines = set(&[
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,applied,5",
            "a\t0\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,contention",
        ]);
        let error = gather(&lines).unwrap_err();
        assert!(error.contains("step 0 of a ran two ways"), "{error}");
        let lines = set(&[
            &format!("b\t0\tinstall\t{INSTALL}"),
            "b\t1\tapply\tN,1,worker A;C,1,apply,fund-A,1,r1,5;C,2,install,fund-A,2;A,1,applied,5",
        ]);
        let error = gather(&lines).unwrap_err();
        assert!(error.contains("not the start"), "{error}");
    }
}
