//! The paths on SQLite: (a) to (e) through a lab `LabConnection`, and copies of
//! (b) and the reference's statements on a bare rusqlite connection, which
//! separate what fencing costs from what the lab's harness costs.

use std::time::Duration;

use fencing_lab::Session;
use fencing_lab::durability::Synchronous;
use fencing_lab::{LabConnection, Journal, Lab, LabError, Outcome, Sql};
use rusqlite::{CachedStatement, Connection, OptionalExtension, TransactionBehavior, named_params};

use crate::run::{Cell, Op, Timing, run};
use crate::{Case, RESOURCE};

/// One SQLite setting: the journal and the `synchronous` level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Rollback journal or WAL.
    pub journal: Journal,
    /// `PRAGMA synchronous` on every benchmarked connection.
    pub sync: Synchronous,
}

/// (a), and the bare copy's: the value, nothing else.
pub const UPDATE_ADD: &str = "UPDATE resources SET value = value + :delta WHERE name = :name";
/// (b): the value, returning the result the record stores.
const UPDATE_ADD_RETURNING: &str =
    "UPDATE resources SET value = value + :delta WHERE name = :name RETURNING value";
/// The record, as `Tx::insert_record` writes it (same text: same cached
/// statement).
const INSERT_RECORD: &str = "INSERT INTO requests (resource, request_id, delta, result, generation)
                 VALUES (:resource, :request_id, :delta, :result, :generation)";
/// The copy of the reference: `Tx`'s statements, word for word.
const READ_STATE: &str = "SELECT generation, value FROM resources WHERE name = :name";
const FIND_RECORD: &str = "SELECT resource, request_id, delta, result, generation FROM requests
                 WHERE resource = :resource AND request_id = :request_id";
const SET_VALUE: &str = "UPDATE resources SET value = :new WHERE name = :name";

/// Measures `case` on a fresh lab file with `connections` threads, then
/// checks that the file shows exactly what was committed.
pub fn measure(
    config: Config,
    case: Case,
    connections: usize,
    timing: Timing,
) -> Result<Cell, String> {
    let lab = Lab::new(config.journal).map_err(|error| describe(&error))?;
    let cell = run(connections, timing, |thread| {
        setup(&lab, config, case, thread)
    })?;
    check(&lab, case, connections, &cell)?;
    Ok(cell)
}

fn describe(error: &LabError) -> String {
    fencing_lab::describe_error(error)
}

/// A request id no other operation of the cell uses.
fn request_id(thread: usize, i: u64) -> String {
    format!("t{thread}-{i}")
}

/// A lab connection at the cell's `synchronous` level.
fn lab_connection(lab: &Lab, config: Config) -> Result<LabConnection, LabError> {
    let mut db = lab.connect()?;
    db.set_synchronous(config.sync)?;
    Ok(db)
}

/// A bare connection to the same file with the lab's settings: busy timeout
/// zero, the cell's `synchronous` level, nothing else.
pub fn bare_connection(lab: &Lab, config: Config) -> Result<Connection, LabError> {
    let conn = Connection::open(lab.path())?;
    conn.busy_timeout(Duration::ZERO)?;
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {}",
        config.sync.sqlite_name()
    ))?;
    Ok(conn)
}

fn setup(lab: &Lab, config: Config, case: Case, thread: usize) -> Result<Op, LabError> {
    Ok(match case {
        Case::Bare => {
            let mut db = lab_connection(lab, config)?;
            Box::new(move |_| {
                let tx = db.begin(TransactionBehavior::Immediate)?;
                tx.sql()
                    .prepare_cached(UPDATE_ADD)?
                    .execute(named_params! { ":delta": 1, ":name": RESOURCE })?;
                tx.commit()
            })
        }
        Case::Floor => {
            let mut db = lab_connection(lab, config)?;
            Box::new(move |i| {
                let tx = db.begin(TransactionBehavior::Immediate)?;
                floor(&tx.sql(), &request_id(thread, i))?;
                tx.commit()
            })
        }
        Case::Apply => {
            let mut db = lab_connection(lab, config)?;
            Box::new(move |i| {
                match db.apply(RESOURCE, 1, &request_id(thread, i), 1)? {
                    Outcome::Applied { .. } => Ok(()),
                    other => Err(unexpected(other)),
                }
            })
        }
        Case::Replay => {
            let mut db = lab_connection(lab, config)?;
            let id = format!("replayed-{thread}");
            // The first apply of the request (retried with the whole setup
            // on contention); every measured one replays it.
            db.apply(RESOURCE, 1, &id, 1)?;
            Box::new(
                move |_| match db.apply(RESOURCE, 1, &id, 1)? {
                    Outcome::Replayed { .. } => Ok(()),
                    other => Err(unexpected(other)),
                },
            )
        }
        Case::WorkerCheck => {
            let mut db = lab_connection(lab, config)?;
            Box::new(move |_| db.unfenced_write(RESOURCE, 1, 1).map(drop))
        }
        Case::BareFloor => {
            let mut conn = bare_connection(lab, config)?;
            Box::new(move |i| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                floor(&*tx, &request_id(thread, i))?;
                Ok(tx.commit()?)
            })
        }
        Case::BareApply => {
            let mut conn = bare_connection(lab, config)?;
            Box::new(move |i| copy_of_reference(&mut conn, &request_id(thread, i), false))
        }
        Case::BareApplyOneRead => {
            let mut conn = bare_connection(lab, config)?;
            Box::new(move |i| copy_of_reference(&mut conn, &request_id(thread, i), true))
        }
        Case::SqlFunction => {
            return Err(LabError::Panicked {
                function: "benchmark",
                message: "(f) is PostgreSQL's alone".to_owned(),
            });
        }
    })
}

/// An outcome the case did not expect: the benchmark would be measuring
/// the wrong path, so the cell stops.
fn unexpected(outcome: Outcome) -> LabError {
    LabError::Panicked {
        function: "benchmark",
        message: format!("unexpected outcome: {outcome}"),
    }
}

/// What (b)'s two statements run on: a bare connection, or what a lab
/// transaction's `sql()` hands out.
pub trait Statements {
    /// The statement `sql`, prepared once per connection.
    fn cached(&self, sql: &str) -> rusqlite::Result<CachedStatement<'_>>;
}

impl Statements for Connection {
    fn cached(&self, sql: &str) -> rusqlite::Result<CachedStatement<'_>> {
        self.prepare_cached(sql)
    }
}

impl Statements for Sql<'_> {
    fn cached(&self, sql: &str) -> rusqlite::Result<CachedStatement<'_>> {
        self.prepare_cached(sql)
    }
}

/// (b): the value and the record of the request, two statements.
pub fn floor(conn: &impl Statements, request_id: &str) -> Result<(), LabError> {
    let result: i64 = conn
        .cached(UPDATE_ADD_RETURNING)?
        .query_row(named_params! { ":delta": 1, ":name": RESOURCE }, |row| {
            row.get(0)
        })?;
    insert_record(conn, request_id, result)
}

fn insert_record(conn: &impl Statements, request_id: &str, result: i64) -> Result<(), LabError> {
    conn.cached(INSERT_RECORD)?.execute(named_params! {
        ":resource": RESOURCE,
        ":request_id": request_id,
        ":delta": 1,
        ":result": result,
        ":generation": 1,
    })?;
    Ok(())
}

/// The reference `solutions/apply.rs` with `Tx`'s statements inlined, on a
/// bare connection, for generation 1 and delta 1. With `one_read`, the
/// resource's row is read once (generation and value together) instead of
/// once per `Tx` method.
pub fn copy_of_reference(
    conn: &mut Connection,
    request_id: &str,
    one_read: bool,
) -> Result<(), LabError> {
    let (generation, delta) = (1_i64, 1_i64);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (installed, value) = read_state(&tx)?;
    if generation != installed {
        return Err(LabError::Stale {
            presented: generation,
            installed,
        });
    }
    let record: Option<i64> = tx
        .prepare_cached(FIND_RECORD)?
        .query_row(
            named_params! { ":resource": RESOURCE, ":request_id": request_id },
            |row| row.get(2),
        )
        .optional()?;
    if record.is_some() {
        // A replay: nothing to write; dropping the transaction rolls back.
        return Ok(());
    }
    let value = if one_read { value } else { read_state(&tx)?.1 };
    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;
    tx.prepare_cached(SET_VALUE)?
        .execute(named_params! { ":new": result, ":name": RESOURCE })?;
    insert_record(&*tx, request_id, result)?;
    Ok(tx.commit()?)
}

fn read_state(conn: &Connection) -> Result<(i64, i64), LabError> {
    Ok(conn
        .prepare_cached(READ_STATE)?
        .query_row(named_params! { ":name": RESOURCE }, |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?)
}

/// The file must show what the threads committed: one unit of value per
/// effect, one record per recorded effect, nothing for a replay.
fn check(lab: &Lab, case: Case, connections: usize, cell: &Cell) -> Result<(), String> {
    let value = lab.state(RESOURCE).map_err(|error| describe(&error))?.value;
    let records = lab
        .records(RESOURCE)
        .map_err(|error| describe(&error))?
        .len() as u64;
    let (want_value, want_records) = match case {
        Case::Bare | Case::WorkerCheck => (cell.committed, 0),
        Case::Replay => (connections as u64, connections as u64),
        _ => (cell.committed, cell.committed),
    };
    if (value as u64, records) == (want_value, want_records) {
        Ok(())
    } else {
        Err(format!(
            "{case:?}: the file shows value {value} and {records} records, \
             the threads committed {want_value} effects and {want_records} records"
        ))
    }
}
