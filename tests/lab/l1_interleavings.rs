//! L1.3: every interleaving of two workers and the authority, run on a real
//! SQLite file. (The explorer drives SQLite connections; it has no
//! PostgreSQL twin.)

use fencing_lab::Journal;
use fencing_lab::explore::{Exploration, Invariant, Route, Schedule, Setup, explore};

use crate::support::*;

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
    crate::enumerator::check_the_enumerator();
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
