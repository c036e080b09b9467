//! L8 (feature `postgres-sql`): the destination enforces the contract
//! itself. The contract is two functions in the database, and roles say who
//! may call which (see [`crate::pg::contract`]). Each scene checks what the
//! database refused or let through, by the observer's reading of the rows,
//! never by the wording of an error.

use super::expect::{INSTALLED, applied, faulted, rec, stale};
use super::{A, Observer, Stage, Step};
use crate::claims::facts::words::WORKER_TEMPORARY_RELATIONS;
use crate::claims::facts::{Observed, Pause};
use crate::pg::contract::{AUTHORITY, OWNER, SqlLab, WORKER};
use crate::transcript::Halt;
use crate::{ExternalApi, LabError, Session, checkpoint, describe, describe_error};

/// What a role's own statement came to, as a check compares it: `done`
/// (written, installed), refused by the role's rights, refused otherwise
/// (a rule of the schema, a refusal of the function), or what else it
/// met (contention, a stub, the server).
fn came_to<T>(result: &Result<T, LabError>, done: &str) -> String {
    match result {
        Ok(_) => done.to_owned(),
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
const CREATED: &str = "created";

/// `who`'s own `step`, which its role has no right to take: told, then
/// checked to be refused by the database as a permission.
fn denied<T>(
    s: &Stage<'_, SqlLab>,
    who: &str,
    step: &str,
    result: &Result<T, LabError>,
    done: &str,
) -> Result<(), Halt> {
    s.say(who, format_args!("{step} -> {}", told(result, done)));
    s.same(step, PERMISSION_DENIED, came_to(result, done))
}

/// How a role's own statement is told: `done`, or the server's words.
fn told<T>(result: &Result<T, LabError>, done: &str) -> String {
    match result {
        Ok(_) => done.to_owned(),
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

/// L8.5: the worker cannot redirect the functions. On the session its
/// calls run on, it makes temporary relations named like the lab's
/// tables: a view `resources` over the lab's table that reports generation
/// 1 for every row, and a table `requests` with a record the lab never
/// wrote, both open to every role. A session finds its temporary relations
/// first unless its `search_path` names `pg_temp` later; the functions must
/// read and write the lab's tables whoever calls them. Its stale request is
/// still refused and changes nothing, and its current one lands in the
/// lab's tables.
pub fn worker_cannot_redirect(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.5", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 1000), stale(1, 2))?;

    let step = "the worker's own CREATE TEMP VIEW resources (every row at generation 1, \
                over the lab's table) and TEMP TABLE requests (a record r3, result 999), \
                granted to PUBLIC";
    let schema = s.lab.pg().schema();
    // `security_invoker`: the view reads the lab's table with the rights of
    // whoever reads the view, so inside a function, the owner's.
    let result = worker.as_worker(&format!(
        "CREATE TEMP VIEW resources WITH (security_invoker = true) AS
             SELECT name, 1::bigint AS generation, value FROM {schema}.resources;
         CREATE TEMP TABLE requests (resource text, request_id text, delta bigint,
                                     result bigint, generation bigint);
         INSERT INTO requests VALUES ('{A}', 'r3', 5, 999, 2);
         GRANT SELECT, UPDATE ON resources TO PUBLIC;
         GRANT SELECT, INSERT, UPDATE ON requests TO PUBLIC;"
    ));
    s.say(
        "worker A",
        format_args!("{step} -> {}", told(&result, CREATED)),
    );
    if let Err(error) = &result {
        // The worker's right to make temporary relations is the server's
        // (PUBLIC's TEMP on the database), not the learner's file's.
        return Err(s.not_checked(step, describe_error(error)));
    }

    let step = format!("apply({A}, generation 1, \"r2\", +1000) {WORKER_TEMPORARY_RELATIONS}");
    let result = worker.apply(A, 1, "r2", 1000);
    let step = Step::compared(step, stale(1, 2), describe(&result))
        .got(Observed::Answer(super::expect::answer(&result)))
        .at(Pause::WorkerRelations);
    s.told("worker A", &worker, step)?;
    s.observe(A, 2, 0, &[])?;

    s.apply("worker A", &mut worker, (A, 2, "r3", 5), applied(5))?;
    s.observe(A, 2, 5, &[rec(A, "r3", 5, 5, 2)])
}

/// L8.6: the authority may install, and nothing else. Its call of `apply`,
/// its own `UPDATE` of the value, `INSERT` of a record and `DELETE` of the
/// records are each refused by the database as a permission and change
/// nothing; its install still lands.
pub fn authority_only_installs(o: &dyn Observer, lab: &SqlLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L8.6", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 2, "r1", 5), applied(5))?;

    let step = format!("the authority calls apply({A}, generation 2, \"r2\", +1000)");
    let result = s.lab.apply_as(AUTHORITY, A, 2, "r2", 1000);
    denied(&s, "authority", &step, &result, &describe(&result))?;
    let step = "the authority's own UPDATE resources SET value = 1000";
    let result = s.lab.write_value_as(AUTHORITY, A, 1000);
    denied(&s, "authority", step, &result, WRITTEN)?;
    let step = "the authority's own INSERT INTO requests of r3 (+1000), never applied";
    let result = s.lab.insert_record_as(AUTHORITY, A, "r3", 1000, 2);
    denied(&s, "authority", step, &result, WRITTEN)?;
    let step = format!("the authority's own DELETE FROM requests WHERE resource = '{A}'");
    let result = s.lab.delete_records_as(AUTHORITY, A);
    denied(&s, "authority", &step, &result, WRITTEN)?;
    s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 2)])?;

    // Its own part still works.
    s.install("authority", &mut authority, A, 3, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 2, "r4", 5), stale(2, 3))?;
    s.state(A, 3, 5)
}
