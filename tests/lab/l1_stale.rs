//! L1: authority can become stale.

use fencing_lab::explore::{Exploration, Invariant, Route, Schedule, Setup, explore};
use fencing_lab::{Checkpoint, Journal, Lab, counterexample};
use rstest::rstest;

use crate::support::*;

/// A worker reads generation 1 and pauses; the authority installs 2; the
/// worker comes back with 1 and the destination refuses it.
#[rstest]
fn l1_1_worker_holding_1_is_rejected_as_stale_after_2_is_installed(lab: Lab) {
    let c = claim("L1.1");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    // The worker checks its authority: generation 1.
    let held = lab.state(A).unwrap().generation;
    // While it pauses, the authority moves on.
    c.install(&mut authority, A, 2, INSTALLED);
    // The worker comes back with what it read.
    c.apply(&mut worker, (A, held, "r1", 5), stale(1, 2));

    c.state(&lab, A, 2, 0);
    c.records(&lab, A, &[]);
}

/// With no pause at all, an install can still land between a worker's own
/// check and its write. The worker-side check lets that stale write through;
/// `apply`, which checks in the transaction that writes, does not.
#[rstest]
fn l1_2_install_between_check_and_write_passes_a_worker_side_check_but_not_apply(lab: Lab) {
    let c = claim("L1.2");
    let mut worker = lab.connect().unwrap();

    // The counterexample: check, then write without a generation. The
    // install lands in the gap between the two statements.
    let authority_lab = lab.clone();
    pause_at(&mut worker, Checkpoint::WorkerChecked, move || {
        let mut authority = authority_lab.connect()?;
        fencing_lab::install_generation(&mut authority, A, 2)
    });
    let written = counterexample::unfenced_write(&mut worker, A, 1, 5);
    c.same(
        "worker-side check, then write +5",
        "Ok(5)",
        format!("{written:?}"),
    );
    // The stale write got through under generation 2.
    c.state(&lab, A, 2, 5);

    // Through the contract, the same worker is refused.
    worker.clear_checkpoint();
    c.apply(&mut worker, (A, 1, "r1", 5), stale(1, 2));
    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[]);
}

/// The same race with no pause, through `apply` on both sides: the worker
/// reads 1, the install lands at once, the apply right after it is stale.
#[rstest]
fn l1_2_install_landing_right_before_apply_gets_it_rejected(lab: Lab) {
    let c = claim("L1.2");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.apply(&mut worker, (A, 1, "r1", 1), applied(1));
    let held = lab.state(A).unwrap().generation;
    c.install(&mut authority, A, held + 1, INSTALLED);
    c.apply(&mut worker, (A, held, "r2", 1), stale(1, 2));

    c.state(&lab, A, 2, 1);
    c.records(&lab, A, &[rec(A, "r1", 1, 1, 1)]);
}

/// The explorations L1.3 runs: the story's (WAL, one install), and with
/// `FENCING_LAB_THOROUGH` also the rollback journal and two installs.
fn setups(route: Route) -> Vec<Setup> {
    let mut setups = vec![Setup::new(route)];
    if thorough() {
        for (journal, last_generation) in [
            (Journal::Rollback, 2),
            (Journal::Wal, 3),
            (Journal::Rollback, 3),
        ] {
            setups.push(Setup {
                route,
                journal,
                last_generation,
            });
        }
    }
    setups
}

/// Where in the exploration a schedule sits, and its steps, one a line.
fn told(found: &Exploration, schedule: &Schedule) -> String {
    let setup = found.setup;
    let mut text = format!(
        "schedule {} of {} ({}, the authority installs up to {}{})",
        schedule.number,
        found.schedules,
        setup.journal,
        setup.last_generation,
        if found.unfinished {
            "; stopped there: an exercise is still a stub"
        } else {
            ""
        }
    );
    for step in schedule.numbered_steps() {
        text.push_str("\n              ");
        text.push_str(&step);
    }
    text
}

/// Every order of the story: each of two workers reads its generation,
/// applies once and retries once; the authority installs, in between and
/// while an apply is paused at each checkpoint it reaches. In every
/// schedule no effect commits under a generation other than the installed
/// one, no request applies twice, the value adds up, and every replay
/// returns the original result.
#[test]
fn l1_3_every_interleaving_through_apply_keeps_the_invariants() {
    let c = claim("L1.3");
    for setup in setups(Route::Apply) {
        let found = explore(setup).expect("the harness runs the exploration");
        if let Some(schedule) = found.first_broken() {
            // Expected: the rules it broke; got: how it broke them.
            let mut broken: Vec<Invariant> =
                schedule.violations.iter().map(|v| v.invariant).collect();
            broken.sort();
            broken.dedup();
            let rules: Vec<String> = broken
                .iter()
                .map(|i| format!("{i}: {}", i.rule()))
                .collect();
            let got: Vec<String> = schedule.violations.iter().map(|v| v.to_string()).collect();
            c.fail(told(&found, schedule), rules.join("; "), got.join("; "));
        }
        println!(
            "L1.3 apply ({}, installs up to {}): {} schedules, {} held, {} with an install tried while apply was paused",
            setup.journal, setup.last_generation, found.schedules, found.held, found.paused
        );
        // An exploration that never paused an apply would prove little.
        c.same(
            format_args!("{} schedules ({})", found.schedules, setup.journal),
            "some schedules try the install while apply is paused",
            if found.paused > 0 {
                "some schedules try the install while apply is paused"
            } else {
                "no schedule reached a checkpoint of apply"
            },
        );
    }
}

/// The same exploration, the workers now checking for themselves and
/// writing without a generation: some schedule lets a write checked under
/// generation 1 commit after the authority installed 2. The authority's
/// installs are the learner's, and every one of them must land.
#[test]
fn l1_3_the_same_exploration_lets_a_stale_write_through_the_worker_side_check() {
    let c = claim("L1.3");
    for setup in setups(Route::WorkerSideCheck) {
        let found = explore(setup).expect("the harness runs the exploration");
        if let Some(schedule) = found.example(Invariant::Answered) {
            let got: Vec<String> = schedule
                .violations
                .iter()
                .filter(|v| v.invariant == Invariant::Answered)
                .map(|v| v.to_string())
                .collect();
            c.fail(
                told(&found, schedule),
                "every install lands",
                got.join("; "),
            );
        }
        let Some(schedule) = found.example(Invariant::Fenced) else {
            c.fail(
                format_args!("{} schedules ({})", found.schedules, setup.journal),
                "a schedule in which a stale write commits",
                "every schedule kept \"fenced\"",
            );
        };
        println!(
            "L1.3 worker-side check ({}, installs up to {}): {} schedules, {} broke \"fenced\" (plainest: schedule {})",
            setup.journal,
            setup.last_generation,
            found.schedules,
            found.breaks(Invariant::Fenced),
            schedule.number
        );
        // The stale write got in through the gap between check and write.
        c.same(
            told(&found, schedule),
            "the install lands while the worker is paused after its check",
            if schedule
                .steps
                .iter()
                .any(|step| step.ends_with("paused after the worker's check"))
            {
                "the install lands while the worker is paused after its check"
            } else {
                "no pause after the worker's check"
            },
        );
    }
}
