//! A transaction on the lab's SQLite file, as the learner's code holds it.
//!
//! The harness owns the connection and hands the code under test a
//! [`Destination`] for one call: a transaction can be begun on it, and
//! nothing else. Inside a transaction ([`Tx`]) there is one method per
//! statement the exercise needs, and [`Tx::sql`] for SQL of one's own. The
//! SQL is plumbing; which statements to run, in which order, in which kind
//! of transaction, is the exercise.

use std::fmt;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, named_params};

use crate::LabError;

/// A resource as an observer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// The installed generation.
    pub generation: i64,
    /// The current value.
    pub value: i64,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "generation {}, value {}", self.generation, self.value)
    }
}

/// What the destination remembers about one applied request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The resource the request changed.
    pub resource: String,
    /// The caller's identity for this intent.
    pub request_id: String,
    /// The change the request asked for.
    pub delta: i64,
    /// The value `apply` returned the first time: what a replay returns.
    pub result: i64,
    /// The generation under which the request was applied.
    pub generation: i64,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} delta {:+} result {} generation {}",
            self.resource, self.request_id, self.delta, self.result, self.generation
        )
    }
}

/// The destination, for one call of the learner's code: its one power is to
/// begin a transaction.
pub struct Destination<'c> {
    /// The harness's connection (busy timeout zero, instrumented).
    conn: &'c Connection,
}

impl<'c> Destination<'c> {
    /// The harness makes one for each call, on a connection of its own.
    #[doc(hidden)]
    pub fn new(conn: &'c Connection) -> Destination<'c> {
        Destination { conn }
    }

    /// Begins a transaction. `behavior` is the learner's decision: SQLite's
    /// `DEFERRED` takes no lock until the first statement needs one,
    /// `IMMEDIATE` takes the write lock at once.
    ///
    /// Fails with [`LabError::Contention`] when the lock cannot be had.
    pub fn begin(&mut self, behavior: TransactionBehavior) -> Result<Tx<'_>, LabError> {
        // `&mut self` keeps a second transaction from being begun while
        // this one lives, as `Connection::transaction` would.
        Tx::begin(self.conn, behavior)
    }
}

/// An open transaction on a [`Destination`]. Dropping it without
/// [`commit`](Tx::commit) rolls everything back, which is what makes `?` on
/// an error safe.
pub struct Tx<'a> {
    /// The rusqlite transaction (rolls back on drop).
    tx: rusqlite::Transaction<'a>,
}

impl<'a> Tx<'a> {
    /// Begins a transaction on `conn`: the harness's way, for a connection
    /// it holds (the learner's code begins one on its [`Destination`]).
    #[doc(hidden)]
    pub fn begin(conn: &'a Connection, behavior: TransactionBehavior) -> Result<Tx<'a>, LabError> {
        let tx = rusqlite::Transaction::new_unchecked(conn, behavior)?;
        Ok(Tx { tx })
    }

    /// Reads the installed generation of `resource`.
    ///
    /// Errors: [`LabError::UnknownResource`]. Like any statement that reads
    /// the generation, it reaches the checkpoint after the generation is
    /// read once done.
    pub fn installed_generation(&self, resource: &str) -> Result<i64, LabError> {
        Ok(rows::read_state(&self.tx, resource)?.generation)
    }

    /// Writes a new installed generation for `resource`.
    ///
    /// Like any write of the generation, it reaches the checkpoint before
    /// the install first.
    pub fn set_generation(&self, resource: &str, generation: i64) -> Result<(), LabError> {
        self.update(
            "UPDATE resources SET generation = :new WHERE name = :name",
            resource,
            generation,
        )
    }

    /// Reads the current value of `resource`.
    ///
    /// Errors: [`LabError::UnknownResource`].
    pub fn value(&self, resource: &str) -> Result<i64, LabError> {
        // The value alone: reading the generation again would reach the
        // generation's checkpoint a second time.
        self.tx
            .prepare_cached("SELECT value FROM resources WHERE name = :name")?
            .query_row(named_params! { ":name": resource }, |row| row.get(0))
            .optional()?
            .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))
    }

    /// Writes a new value for `resource`: the effect.
    ///
    /// Like any write of the value, it reaches the checkpoint before the
    /// effect first.
    pub fn set_value(&self, resource: &str, value: i64) -> Result<(), LabError> {
        self.update(
            "UPDATE resources SET value = :new WHERE name = :name",
            resource,
            value,
        )
    }

    /// Looks up the record of `request_id` on `resource`.
    ///
    /// Like any read of `requests`, it reaches the checkpoint after the
    /// record was looked up once done, whether it found a record or not.
    pub fn find_record(
        &self,
        resource: &str,
        request_id: &str,
    ) -> Result<Option<Record>, LabError> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT resource, request_id, delta, result, generation FROM requests
                 WHERE resource = :resource AND request_id = :request_id",
            )?
            .query_row(
                named_params! { ":resource": resource, ":request_id": request_id },
                rows::record_from_row,
            )
            .optional()?)
    }

    /// Stores a record.
    ///
    /// Like any insert into `requests`, it reaches the checkpoint before
    /// the record first.
    pub fn insert_record(&self, record: &Record) -> Result<(), LabError> {
        self.tx
            .prepare_cached(
                "INSERT INTO requests (resource, request_id, delta, result, generation)
                 VALUES (:resource, :request_id, :delta, :result, :generation)",
            )?
            .execute(named_params! {
                ":resource": record.resource,
                ":request_id": record.request_id,
                ":delta": record.delta,
                ":result": record.result,
                ":generation": record.generation,
            })?;
        Ok(())
    }

    /// Commits: everything written in this transaction becomes visible at
    /// once, or (on error) none of it does.
    pub fn commit(self) -> Result<(), LabError> {
        Ok(self.tx.commit()?)
    }

    /// SQL of your own inside this transaction, for what the methods above
    /// do not offer. The reference never needs it. A statement run here
    /// reaches the same checkpoints as the methods' own, and the database
    /// refuses what could blind the lab's observer (see the crate's docs).
    pub fn sql(&self) -> Sql<'_> {
        Sql { conn: &self.tx }
    }

    fn update(&self, sql: &str, resource: &str, new: i64) -> Result<(), LabError> {
        match self
            .tx
            .prepare_cached(sql)?
            .execute(named_params! { ":new": new, ":name": resource })?
        {
            0 => Err(LabError::UnknownResource(resource.to_owned())),
            _ => Ok(()),
        }
    }
}

/// Statements of your own inside a [`Tx`]: run, query, prepare, and
/// nothing else of the connection (no functions, hooks or settings).
#[derive(Clone, Copy)]
pub struct Sql<'t> {
    /// The connection inside the transaction.
    conn: &'t Connection,
}

impl<'t> Sql<'t> {
    /// Runs one statement with `params`; the number of rows it changed.
    pub fn execute<P: rusqlite::Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.conn.execute(sql, params)
    }

    /// Runs one query and maps its first row with `f`; no row is
    /// `Err(QueryReturnedNoRows)` (`.optional()` turns it into `None`).
    pub fn query_row<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: rusqlite::Params,
        F: FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    {
        self.conn.query_row(sql, params, f)
    }

    /// Prepares a statement to run more than once, or to read many rows.
    pub fn prepare(&self, sql: &str) -> rusqlite::Result<rusqlite::Statement<'t>> {
        self.conn.prepare(sql)
    }

    /// Prepares a statement once per connection and keeps it for the next
    /// call with the same text.
    pub fn prepare_cached(&self, sql: &str) -> rusqlite::Result<rusqlite::CachedStatement<'t>> {
        self.conn.prepare_cached(sql)
    }

    /// Runs statements separated by semicolons, without parameters.
    pub fn execute_batch(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn.execute_batch(sql)
    }

    /// The number of rows the last finished `INSERT`, `UPDATE` or `DELETE`
    /// changed.
    pub fn changes(&self) -> u64 {
        self.conn.changes()
    }
}

/// The harness's reads of the lab's tables, shared with [`Tx`]'s so a row
/// is read one way. They take a connection, which the code under test never
/// has.
#[doc(hidden)]
pub mod rows {
    use rusqlite::{Connection, OptionalExtension, named_params};

    use super::{Record, State};
    use crate::LabError;

    /// Reads one resource's row; a missing row is an unknown resource.
    ///
    /// This and the statements of [`Tx`](super::Tx) are prepared once per
    /// connection (`prepare_cached`): in a debug build, parsing the SQL is a
    /// large part of a short query, and the explorer runs thousands of them.
    pub fn read_state(conn: &Connection, resource: &str) -> Result<State, LabError> {
        conn.prepare_cached("SELECT generation, value FROM resources WHERE name = :name")?
            .query_row(named_params! { ":name": resource }, |row| {
                Ok(State {
                    generation: row.get(0)?,
                    value: row.get(1)?,
                })
            })
            .optional()?
            .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))
    }

    /// Every recorded request of a resource, ordered by request id.
    pub fn read_records(conn: &Connection, resource: &str) -> Result<Vec<Record>, LabError> {
        let mut stmt = conn.prepare_cached(
            "SELECT resource, request_id, delta, result, generation FROM requests
             WHERE resource = :resource ORDER BY request_id",
        )?;
        let rows = stmt.query_map(named_params! { ":resource": resource }, record_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A row of `requests`, in the column order of the lab's queries.
    pub fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Record> {
        Ok(Record {
            resource: row.get(0)?,
            request_id: row.get(1)?,
            delta: row.get(2)?,
            result: row.get(3)?,
            generation: row.get(4)?,
        })
    }
}
