//! L5: counterexamples bound the protection. Each test checks the part the
//! learner's code must get right, then shows the limit it cannot cross.
//! Each test runs its scene (`src/scenes/l5.rs`), the one the story tells.
//! (L5.4, the restore, is in `l5_restore.rs`: lesson L8's schema refuses
//! it, so the SQL functions' track leaves it out.)

use fencing_lab::scenes::l5;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// A fault between writing the value and recording the request: both roll
/// back, and the retry applies exactly once.
#[rstest]
fn l5_1_fault_between_value_and_record_rolls_back_and_retry_applies_once(lab: Lab) {
    let c = claim("L5.1");
    c.run(l5::fault_rolls_back(&c, &lab));
}

/// An external call made inside apply, before the fault, stays made: the
/// database forgets the attempt, the external ledger does not.
#[rstest]
fn l5_2_external_call_is_not_undone_by_rollback(lab: Lab) {
    let c = claim("L5.2");
    c.run(l5::external_call_is_not_undone(&c, &lab));
}

/// A direct SQL write does not go through apply, so nothing checks its
/// generation: it changes the value although generation 2 is installed and
/// the writer never held it.
#[rstest]
fn l5_3_direct_sql_write_bypasses_the_contract(lab: Lab) {
    let c = claim("L5.3");
    c.run(l5::direct_sql_bypasses_the_contract(&c, &lab));
}

/// Closing every connection and connecting again keeps what was committed:
/// on SQLite the file is opened again, on PostgreSQL new sessions start.
/// Nothing crashes here; it is not a crash or power-loss test.
#[rstest]
fn l5_5_reopening_keeps_committed_values_and_records(lab: Lab) {
    let c = claim("L5.5");
    c.run(l5::reopening_keeps_what_was_committed(&c, &lab));
}
