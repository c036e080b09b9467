//! L1.3: every interleaving of two workers and the authority, run on a real
//! SQLite file. (The explorer drives SQLite connections; it has no
//! PostgreSQL twin.)

use fencing_lab::Journal;
use fencing_lab::explore::{Invariant, Route, Setup};
use fencing_lab::scenes;

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
        let found = c.run(scenes::l1::every_interleaving(&c, setup));
        println!(
            "L1.3 apply ({}, installs up to {}): {} schedules, {} held, {} with an install tried while apply was paused",
            setup.journal, setup.last_generation, found.schedules, found.held, found.paused
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
        let found = c.run(scenes::l1::every_interleaving(&c, setup));
        println!(
            "L1.3 worker-side check ({}, installs up to {}): {} schedules, {} broke \"fenced\" (plainest: schedule {})",
            setup.journal,
            setup.last_generation,
            found.schedules,
            found.breaks(Invariant::Fenced),
            found
                .example(Invariant::Fenced)
                .map_or(0, |schedule| schedule.number)
        );
    }
}
