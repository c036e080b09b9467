//! Checks the hints a graded run printed against what each step showed:
//! reads one failure a line on standard input, `ID<TAB>STEP<TAB>EXPECTED<TAB>GOT`
//! (each field with `\\`, `\n` and `\t` escaped), and fails on any hint whose
//! premise does not hold for its step (`lab_claims::hints::premise_holds`, on the facts
//! `lab_claims::facts::Facts::read` reads from the three lines).
//! `.ci/hint-premises` gathers the failures from the graded classes and from
//! cargo-mutants' logs.

use std::io::{self, BufRead};
use std::process::ExitCode;

fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn main() -> ExitCode {
    let (mut checked, mut false_premises) = (0usize, Vec::new());
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else {
            eprintln!("hint-premises: standard input is not text");
            return ExitCode::FAILURE;
        };
        let fields: Vec<String> = line.split('\t').map(unescape).collect();
        let [id, step, expected, got] = fields.as_slice() else {
            eprintln!("hint-premises: not four fields: {line}");
            return ExitCode::FAILURE;
        };
        checked += 1;
        let facts = lab_claims::facts::Facts::read(step, expected, got);
        if !lab_claims::hints::premise_holds(id, &facts) {
            false_premises.push(format!(
                "[hint {id}] on step {step:?}\n    expected: {expected}\n    got:      {got}"
            ));
        }
    }
    // A premise covers every level of its hint: a level that names a cause
    // or a fix takes it for granted too (claims/src/hints/premise.rs).
    println!(
        "{checked} shown hints checked against their steps: {} (failure, level) pairs, {} false",
        checked * 3,
        false_premises.len() * 3
    );
    if false_premises.is_empty() {
        return ExitCode::SUCCESS;
    }
    println!(
        "{} shown where the step does not show their premise:",
        false_premises.len()
    );
    for failure in &false_premises {
        println!("  {failure}");
    }
    ExitCode::FAILURE
}
