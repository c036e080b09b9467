//! L5: counterexamples bound the protection. Each scene checks the part the
//! learner's code must get right, then shows the limit it cannot cross.

use super::expect::{INSTALLED, applied, faulted, never_issued, rec, replayed, stale};
use super::{A, B, Observer, Stage};
use crate::checkpoint;
use crate::transcript::Halt;
use crate::{ExternalApi, Session, Store};

/// L5.1: a fault between writing the value and recording the request: both
/// roll back, and the retry applies exactly once.
pub fn fault_rolls_back<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L5.1", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r0", 2), applied(2))?;
    worker.on_checkpoint(checkpoint::between_writes(true, || {}));
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), faulted())?;
    s.observe(A, 1, 2, &[rec(A, "r0", 2, 2, 1)])?;

    worker.clear_checkpoint();
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(7))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), replayed(7))?;
    s.observe(A, 1, 7, &[rec(A, "r0", 2, 2, 1), rec(A, "r1", 5, 7, 1)])
}

/// L5.2: an external call made inside apply, before the fault, stays made:
/// the database forgets the attempt, the external ledger does not.
pub fn external_call_is_not_undone<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L5.2", lab);
    let mut worker = s.connect()?;
    let api = ExternalApi::new();

    // The external call happens inside apply, before the fault.
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(true, move || {
        ledger.call("pay 5 for r1")
    }));
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), faulted())?;

    // The database rolled back ...
    s.observe(A, 1, 0, &[])?;
    // ... the external side did not.
    let calls = api.calls().join("; ");
    s.say("external", format_args!("ledger: {calls}"));
    s.same("external ledger after the rollback", "pay 5 for r1", calls)?;

    // The retry pays again: one request in the database, two payments.
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(false, move || {
        ledger.call("pay 5 for r1")
    }));
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.tell_state(A)?;
    s.state(A, 1, 5)?;
    s.say(
        "external",
        format_args!("ledger: {}", api.calls().join("; ")),
    );
    s.say("", "one request in the database, two payments outside it");
    Ok(())
}

/// L5.3: a direct SQL write does not go through apply, so nothing checks
/// its generation: it changes the value although generation 2 is installed
/// and the writer never held it.
pub fn direct_sql_bypasses_the_contract<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L5.3", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;
    s.state(A, 2, 0)?;

    s.lab.direct_sql_write(A, 100)?;
    s.say(
        "operator",
        "UPDATE resources SET value = 100 (direct SQL, no generation)",
    );
    s.observe(A, 2, 100, &[])
}

/// L5.4: a bad recovery restores generation 1: its holders are accepted
/// again, and the holder of 2 is now "never issued".
pub fn restoring_an_old_generation<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L5.4", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;

    s.lab.restore_generation(A, 1)?;
    s.say("operator", "restores generation 1 from an old backup");
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.apply("worker B", &mut worker, (A, 2, "r2", 5), never_issued(2, 1))?;
    s.observe(A, 1, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// L5.5: closing every connection and connecting again keeps what was
/// committed: on SQLite the file is opened again, on PostgreSQL new
/// sessions start. Nothing crashes here; it is not a crash or power-loss
/// test.
pub fn reopening_keeps_what_was_committed<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L5.5", lab);
    {
        let (mut worker, mut authority) = (s.connect()?, s.connect()?);
        s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
        s.install("authority", &mut authority, A, 2, INSTALLED)?;
        s.apply("worker B", &mut worker, (B, 1, "r1", 3), applied(3))?;
    }
    // Every connection is closed now; open the file again.
    s.say("", "(every connection closed; the file is opened again)");
    let mut worker = s.connect()?;
    s.tell_state(A)?;
    s.state(A, 2, 5)?;
    s.state(B, 1, 3)?;
    s.records(A, &[rec(A, "r1", 5, 5, 1)])?;
    s.apply("worker B", &mut worker, (A, 2, "r1", 5), replayed(5))?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 5), stale(1, 2))
}
