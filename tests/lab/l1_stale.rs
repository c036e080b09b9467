//! L1: authority can become stale. (The exploration of every interleaving,
//! L1.3, is in `l1_interleavings.rs`.)

use fencing_lab::{Checkpoint, Session, describe};
use rstest::rstest;

use super::{Lab, claim, lab};
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
        authority_lab.connect()?.install_generation(A, 2)
    });
    let written = worker.unfenced_write(A, 1, 5);
    c.same(
        "worker-side check, then write +5 (the value it leaves)",
        "5",
        describe(&written),
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
