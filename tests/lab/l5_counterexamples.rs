//! L5: counterexamples bound the protection. Each test checks the part the
//! learner's code must get right, then shows the limit it cannot cross.

use fencing_lab::{ExternalApi, Store, checkpoint};
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// A fault between writing the value and recording the request: both roll
/// back, and the retry applies exactly once.
#[rstest]
fn l5_1_fault_between_value_and_record_rolls_back_and_retry_applies_once(lab: Lab) {
    let c = claim("L5.1");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r0", 2), applied(2));
    fault_between_writes(&mut worker);
    c.apply(&mut worker, (A, 1, "r1", 5), faulted());
    c.state(&lab, A, 1, 2);
    c.records(&lab, A, &[rec(A, "r0", 2, 2, 1)]);

    worker.clear_checkpoint();
    c.apply(&mut worker, (A, 1, "r1", 5), applied(7));
    c.apply(&mut worker, (A, 1, "r1", 5), replayed(7));
    c.state(&lab, A, 1, 7);
    c.records(&lab, A, &[rec(A, "r0", 2, 2, 1), rec(A, "r1", 5, 7, 1)]);
}

/// An external call made inside apply, before the fault, stays made: the
/// database forgets the attempt, the external ledger does not.
#[rstest]
fn l5_2_external_call_is_not_undone_by_rollback(lab: Lab) {
    let c = claim("L5.2");
    let mut worker = lab.connect().unwrap();
    let api = ExternalApi::new();

    // The external call happens inside apply, before the fault.
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(true, move || {
        ledger.call("pay 5 for r1")
    }));
    c.apply(&mut worker, (A, 1, "r1", 5), faulted());

    // The database rolled back ...
    c.state(&lab, A, 1, 0);
    c.records(&lab, A, &[]);
    // ... the external side did not.
    c.same(
        "external ledger after the rollback",
        "pay 5 for r1",
        api.calls().join("; "),
    );

    worker.clear_checkpoint();
    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.state(&lab, A, 1, 5);
}

/// A direct SQL write does not go through apply, so nothing checks its
/// generation: it changes the value although generation 2 is installed and
/// the writer never held it.
#[rstest]
fn l5_3_direct_sql_write_bypasses_the_contract(lab: Lab) {
    let c = claim("L5.3");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 1, "r1", 5), stale(1, 2));
    c.state(&lab, A, 2, 0);

    lab.direct_sql_write(A, 100).unwrap();
    c.state(&lab, A, 2, 100);
    c.records(&lab, A, &[]);
}

/// A bad recovery restores generation 1: its holders are accepted again,
/// and the holder of 2 is now "never issued".
#[rstest]
fn l5_4_restoring_an_old_generation_accepts_its_requests_again(lab: Lab) {
    let c = claim("L5.4");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 1, "r1", 5), stale(1, 2));

    lab.restore_generation(A, 1).unwrap();
    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.apply(&mut worker, (A, 2, "r2", 5), never_issued(2, 1));
    c.state(&lab, A, 1, 5);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
}

/// Closing every connection and connecting again keeps what was committed:
/// on SQLite the file is opened again, on PostgreSQL new sessions start.
/// Nothing crashes here; it is not a crash or power-loss test.
#[rstest]
fn l5_5_reopening_keeps_committed_values_and_records(lab: Lab) {
    let c = claim("L5.5");
    {
        let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());
        c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
        c.install(&mut authority, A, 2, INSTALLED);
        c.apply(&mut worker, (B, 1, "r1", 3), applied(3));
    }
    // Every connection is closed now; open the file again.
    let mut worker = lab.connect().unwrap();
    c.state(&lab, A, 2, 5);
    c.state(&lab, B, 1, 3);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
    c.apply(&mut worker, (A, 2, "r1", 5), replayed(5));
    c.apply(&mut worker, (A, 1, "r2", 5), stale(1, 2));
}
