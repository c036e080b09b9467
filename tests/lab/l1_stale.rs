//! L1: authority can become stale. (The exploration of every interleaving,
//! L1.3, is in `l1_interleavings.rs`.)

use fencing_lab::scenes;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};
use crate::support::*;

/// A worker reads generation 1 and pauses; the authority installs 2; the
/// worker comes back with 1 and the destination refuses it.
#[rstest]
fn l1_1_worker_holding_1_is_rejected_as_stale_after_2_is_installed(lab: Lab) {
    let c = claim("L1.1");
    c.run(scenes::l1::stale_worker(&c, &lab));
}

/// With no pause at all, an install can still land between a worker's own
/// check and its write. The worker-side check lets that stale write through;
/// `apply`, which checks in the transaction that writes, does not.
#[rstest]
fn l1_2_install_between_check_and_write_passes_a_worker_side_check_but_not_apply(lab: Lab) {
    let c = claim("L1.2");
    c.run(scenes::l1::install_between_check_and_write(&c, &lab));
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
