//! L8 (feature `postgres-sql`): the destination enforces the contract
//! itself. The contract is two functions in the database, and roles say who
//! may call which (see [`crate::pg::contract`]). Each scene checks what the
//! database refused or let through, by the observer's reading of the rows,
//! never by the wording of an error.

use super::expect::{INSTALLED, applied, faulted, stale};
use super::{A, Observer, Stage};
use crate::pg::contract::{AUTHORITY, OWNER, SqlLab, WORKER};
use crate::transcript::Halt;
use crate::{ExternalApi, LabError, Session, checkpoint, describe_error};

/// What a role's own statement came to, as a check compares it: `done`
/// (written, installed), refused by the role's rights, refused otherwise
/// (a rule of the schema, a refusal of the function), or what else it
/// met (contention, a stub, the server).
fn came_to(result: &Result<(), LabError>, done: &str) -> String {
    match result {
        Ok(()) => done.to_owned(),
        Err(LabError::PermissionDenied(_)) => PERMISSION_DENIED.to_owned(),
        Err(
            error @ (LabError::Contention
            | LabError::NotImplemented { .. }
            | LabError::Panicked { .. }
            | LabError::ServerUnavailable(_)),
        ) => describe_error(error),
        Err(_) => REFUSED.to_owned(),
    }
}

const PERMISSION_DENIED: &str = "refused: permission denied";
const REFUSED: &str = "refused";
const WRITTEN: &str = "written";

/// How a role's own statement is told: `done`, or the server's words.
fn told(result: &Result<(), LabError>, done: &str) -> String {
    match result {
        Ok(()) => done.to_owned(),
        Err(error) => describe_error(error),
    }
}

/// L8.1: the worker may call `apply`, not write the table. Its own
/// `UPDATE` of the value (L5.3's write) is refused by the database, as a
/// permission, and changes nothing; through `apply` the same worker's
/// request is judged and lands.
pub fn worker_cannot_write_around(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.1", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    let step = "the worker's own UPDATE resources SET value = 100";
    let result = s.lab.write_value_as(WORKER, A, 100);
    s.say(
        "worker A",
        format_args!("{step} -> {}", told(&result, WRITTEN)),
    );
    s.same(step, PERMISSION_DENIED, came_to(&result, WRITTEN))?;
    s.observe(A, 2, 0, &[])?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;
    s.apply("worker A", &mut worker, (A, 2, "r2", 5), applied(5))?;
    s.tell_state(A)?;
    s.state(A, 2, 5)
}

/// L8.2: installing is the authority's alone. A worker's call of
/// `install_generation` is refused and changes nothing; the authority's
/// installs.
pub fn only_the_authority_installs(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.2", lab);
    let mut worker = s.connect()?;

    let step = "the worker calls install_generation(fund-A, 2)";
    let result = s.lab.install_as(WORKER, A, 2);
    s.say(
        "worker A",
        format_args!("{step} -> {}", told(&result, INSTALLED)),
    );
    s.same(step, PERMISSION_DENIED, came_to(&result, INSTALLED))?;
    s.state(A, 1, 0)?;

    let step = "the authority calls install_generation(fund-A, 2)";
    let result = s.lab.install_as(AUTHORITY, A, 2);
    let got = super::expect::describe_install(&result);
    s.say("authority", format_args!("{step} -> {got}"));
    s.same(step, INSTALLED, got)?;
    s.state(A, 2, 0)?;
    s.apply("worker A", &mut worker, (A, 2, "r1", 5), applied(5))?;
    s.tell_state(A)?;
    s.state(A, 2, 5)
}

/// L8.3: a rule of the schema, not of a function: a restore that writes an
/// old generation back is refused whoever runs it, the tables' owner
/// included, and the old holder stays stale. A higher install still lands.
pub fn generation_never_goes_back(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.3", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.install("authority", &mut authority, A, 3, INSTALLED)?;
    let step = "the owner restores an old backup: UPDATE resources SET generation = 1";
    let result = s.lab.write_generation_as(OWNER, A, 1);
    s.say(
        "operator",
        format_args!("{step} -> {}", told(&result, WRITTEN)),
    );
    s.same(step, REFUSED, came_to(&result, WRITTEN))?;
    s.observe(A, 3, 0, &[])?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 3))?;

    // The rule refuses going back, not going on.
    s.install("authority", &mut authority, A, 4, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 4, "r2", 5), applied(5))?;
    s.state(A, 4, 5)
}

/// L8.4: what stays open. The tables' owner may lift the schema's rules
/// and write around `apply`: the old generation and a value of its own go
/// back, and the old holder is accepted again. And an external call made
/// inside `apply` is not undone when its transaction rolls back.
pub fn what_stays_open(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.4", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;
    let step = "the owner: DISABLE TRIGGER USER; UPDATE resources SET generation = 1, value = 100; ENABLE TRIGGER USER";
    let result = s.lab.owner_writes_around_the_rules(A, 1, 100);
    s.say(
        "operator",
        format_args!("{step} -> {}", told(&result, WRITTEN)),
    );
    s.same(step, WRITTEN, came_to(&result, WRITTEN))?;
    s.observe(A, 1, 100, &[])?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 5), applied(105))?;
    s.say(
        "",
        "the holder of generation 1 is accepted again: no role's rights stop the owner",
    );

    // An external call inside apply, then a fault before its commit.
    let api = ExternalApi::new();
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(true, move || {
        ledger.call("pay 5 for r3")
    }));
    s.apply("worker A", &mut worker, (A, 1, "r3", 5), faulted())?;
    worker.clear_checkpoint();
    s.state(A, 1, 105)?;
    let calls = api.calls().join("; ");
    s.say("external", format_args!("ledger: {calls}"));
    s.same("external ledger after the rollback", "pay 5 for r3", calls)
}
