//! Every passed step's run (the scene's events up to its last call's
//! answer), written down when
//! [`fencing_lab::scenes::REFERENCE_RUNS`] names a file: run against the
//! reference, these are the runs a failure's report draws beside the
//! learner's (`cargo xtask reference-runs` gathers them into the grader).
//! Unset, as under `cargo test` and the grader, nothing happens.
//!
//! A line is `TEST<TAB>N<TAB>STEP<TAB>RUN`: the test, how many steps came
//! before this one in it, the step's name, and its run so far as
//! `lab_claims::facts::wire` writes it. The name is for the reader: a
//! scene words a step by what happened (`…, paused … and the install got
//! in`), so the reference's step and the learner's share their number, not
//! always their words.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::thread;

use fencing_lab::scenes::{REFERENCE_RUNS, Step, keeps_every_run};

/// Writes `step`'s run, the `ordinal`th step of this test, if every run
/// is kept and the step has one.
pub fn keep(step: &Step, ordinal: usize) {
    if !keeps_every_run() || step.events.0.is_empty() {
        return;
    }
    let Some(run) = step.facts().so_far_line() else {
        return;
    };
    let Some(test) = thread::current().name().map(str::to_owned) else {
        return;
    };
    let line = format!("{test}\t{ordinal}\t{}\t{run}\n", step.name);
    let mut file = file()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(file) = file.as_mut() {
        // One write per line, under the lock: lines of tests on other
        // threads never mix.
        file.write_all(line.as_bytes())
            .unwrap_or_else(|error| panic!("cannot write {REFERENCE_RUNS}'s file: {error}"));
    }
}

/// The file the variable names, opened once to append.
fn file() -> &'static Mutex<Option<File>> {
    static FILE: OnceLock<Mutex<Option<File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os(REFERENCE_RUNS).map(std::path::PathBuf::from);
        Mutex::new(path.map(|path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .unwrap_or_else(|error| panic!("cannot open {}: {error}", path.display()))
        }))
    })
}
