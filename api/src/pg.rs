//! A transaction on the PostgreSQL track, as the learner's code holds it
//! (feature `postgres`).
//!
//! The harness owns the session and lends the code under test a
//! [`PgDestination`] for one call. Writes reach their checkpoints in the
//! server (row triggers); reads reach theirs from [`PgTx`]'s read methods
//! and from [`OwnSql`], which reports to the harness's [`Observer`] what a
//! statement of the code's own read, as the server's plan of it says.

mod own;

pub use own::OwnSql;

/// The parts of the `postgres` client that SQL of one's own needs through
/// [`PgTx::sql`]: rows, parameters and their types, and errors with their
/// SQLSTATE. Data only, like the SQLite track's `sql`: nothing here opens,
/// holds or hands out a connection (no `Client`, `Transaction`, `Config`,
/// `NoTls`, statement or copy handle), so the code under test still reaches
/// the server only through its [`PgTx`].
///
/// A statement run through [`OwnSql`] fails with the client's [`Error`],
/// whose [`code`](sql::Error::code) is the server's SQLSTATE, compared with the
/// constants of [`SqlState`] (`SqlState::UNIQUE_VIOLATION` is 23505,
/// `SqlState::NUMERIC_VALUE_OUT_OF_RANGE` 22003). A method of [`PgTx`]
/// fails with a [`LabError`]: a failure the lab has no variant of is
/// [`LabError::Postgres`], which carries the same [`Error`]. After an error
/// the server refuses every statement of the transaction until it rolls
/// back, or back to a savepoint taken before the failed statement
/// (`SAVEPOINT name`, `ROLLBACK TO SAVEPOINT name`, through [`OwnSql`]).
///
/// [`Error`]: sql::Error
/// [`SqlState`]: sql::SqlState
pub mod sql {
    /// A row a query of one's own returned: `get` and `try_get` by index
    /// or column name. It holds values only, no handle on the session.
    pub use postgres::Row;
    /// The server's report behind an [`Error`]: message, detail,
    /// constraint, table. A value.
    pub use postgres::error::DbError;
    /// The client's error: its SQLSTATE with `code()`, the server's report
    /// with `as_db_error()`. A value, with no way back to the session.
    pub use postgres::error::Error;
    /// A SQLSTATE, with a constant for each code the server names
    /// (`UNIQUE_VIOLATION`, `NUMERIC_VALUE_OUT_OF_RANGE`, ...).
    pub use postgres::error::SqlState;
    /// How values become parameters and columns become values, and the
    /// server's types (`Type`): conversions, with no session of their own.
    pub use postgres::types;
    /// A type a column can be read into (`row.get::<_, i64>(0)`).
    pub use postgres::types::FromSql;
    /// A value that can be a statement's parameter (`&[&delta, &name]`).
    pub use postgres::types::ToSql;
}

use postgres::Client;

use crate::{LabError, Record, State};

/// Which read a checkpoint follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The installed generation was read.
    Generation,
    /// A record was looked up (found or not).
    Record,
    /// A resource's value was read on its own, without the generation: a
    /// read that another session's effect can overtake if no row lock is
    /// held yet.
    Value,
}

/// The harness's side of a session's read checkpoints; the code under test
/// only ever reaches it through [`PgTx`] and [`OwnSql`].
#[doc(hidden)]
pub trait Observer: Sync {
    /// A read checkpoint reached in the client: waits for the test's
    /// verdict (a fault comes back as the error).
    fn reached(&self, read: Read) -> Result<(), LabError>;
    /// A statement of the code's own read `read`'s data and has returned,
    /// holding its locks: fires the checkpoint and waits until it ran.
    fn read_by_own_sql(&self, read: Read);
    /// Whether a test watches this call: only then do a statement's reads
    /// reach the test (its plan is asked for in every call alike).
    fn watching(&self) -> bool;
    /// The call ran SQL of its own whose reads cannot be told.
    fn note_unread(&self);
    /// A transaction of this call has ended (committed or rolled back)
    /// and another is about to begin: waits for the test's verdict.
    fn between_transactions(&self) -> Result<(), LabError>;
}

/// The destination on PostgreSQL, for one call of the learner's code: its
/// one power is to begin a transaction.
pub struct PgDestination<'a> {
    /// The harness's session (lock timeout 1 ms, the lab's schema).
    client: &'a mut Client,
    /// Where the read checkpoints go.
    observer: &'a dyn Observer,
    /// Whether a transaction was begun in this call already.
    began: bool,
}

impl<'a> PgDestination<'a> {
    /// The harness makes one for each call, on a session of its own.
    #[doc(hidden)]
    pub fn new(client: &'a mut Client, observer: &'a dyn Observer) -> PgDestination<'a> {
        PgDestination {
            client,
            observer,
            began: false,
        }
    }

    /// Begins a transaction at READ COMMITTED, PostgreSQL's default. It
    /// locks nothing by itself: rows are locked by the statements that
    /// touch them ([`PgTx::lock_row`] first of all).
    ///
    /// A second transaction in one call first reaches the checkpoint
    /// between transactions: the first has ended (its row locks are
    /// released), nothing else has started.
    pub fn begin(&mut self) -> Result<PgTx<'_>, LabError> {
        if std::mem::replace(&mut self.began, true) {
            self.observer.between_transactions()?;
        }
        PgTx::begin(self.client, self.observer)
    }
}

/// An open transaction on a [`PgDestination`]. Dropping it without
/// [`commit`](PgTx::commit) rolls everything back and releases its row
/// locks, which is what makes `?` on an error safe.
pub struct PgTx<'a> {
    /// The transaction (rolls back on drop).
    tx: postgres::Transaction<'a>,
    /// What reaches the checkpoints from the client (the reads).
    observer: &'a dyn Observer,
}

impl<'a> PgTx<'a> {
    /// Begins a transaction on `client`: the harness's way, for a session
    /// it holds (the learner's code begins one on its [`PgDestination`]).
    #[doc(hidden)]
    pub fn begin(client: &'a mut Client, observer: &'a dyn Observer) -> Result<PgTx<'a>, LabError> {
        Ok(PgTx {
            tx: client.transaction()?,
            observer,
        })
    }

    /// Locks `resource`'s row until this transaction ends
    /// (`SELECT … FOR UPDATE NOWAIT`). Another transaction that tries to
    /// lock or update the same row meets contention; other rows stay free.
    ///
    /// Errors: [`LabError::Contention`] if another transaction holds the
    /// row, [`LabError::UnknownResource`].
    pub fn lock_row(&mut self, resource: &str) -> Result<(), LabError> {
        rows::lock_row(&mut self.tx, resource)
    }

    /// Reads the installed generation of `resource`: a plain read, which
    /// locks nothing.
    ///
    /// Errors: [`LabError::UnknownResource`]. Checkpoint afterwards: after
    /// the generation was read.
    pub fn installed_generation(&mut self, resource: &str) -> Result<i64, LabError> {
        let generation = rows::read_state(&mut self.tx, resource)?.generation;
        self.observer.reached(Read::Generation)?;
        Ok(generation)
    }

    /// Writes a new installed generation for `resource`.
    ///
    /// Checkpoint before writing: before the install (in the server, like
    /// every write's).
    pub fn set_generation(&mut self, resource: &str, generation: i64) -> Result<(), LabError> {
        self.update(
            "UPDATE resources SET generation = $1 WHERE name = $2",
            resource,
            generation,
        )
    }

    /// Reads the current value of `resource`: a plain read, which locks
    /// nothing.
    ///
    /// Errors: [`LabError::UnknownResource`]. Checkpoint afterwards: after
    /// the value was read.
    pub fn value(&mut self, resource: &str) -> Result<i64, LabError> {
        let value = rows::read_state(&mut self.tx, resource)?.value;
        self.observer.reached(Read::Value)?;
        Ok(value)
    }

    /// Writes a new value for `resource`: the effect.
    ///
    /// Checkpoint before writing: before the effect (in the server, like
    /// every write's).
    pub fn set_value(&mut self, resource: &str, value: i64) -> Result<(), LabError> {
        self.update(
            "UPDATE resources SET value = $1 WHERE name = $2",
            resource,
            value,
        )
    }

    /// Looks up the record of `request_id` on `resource`.
    pub fn find_record(
        &mut self,
        resource: &str,
        request_id: &str,
    ) -> Result<Option<Record>, LabError> {
        let record = self
            .tx
            .query_opt(
                "SELECT resource, request_id, delta, result, generation FROM requests
                 WHERE resource = $1 AND request_id = $2",
                &[&resource, &request_id],
            )?
            .as_ref()
            .map(rows::record_from_row);
        self.observer.reached(Read::Record)?;
        Ok(record)
    }

    /// Stores a record.
    ///
    /// Checkpoint before writing: before the record (in the server, like
    /// every write's).
    pub fn insert_record(&mut self, record: &Record) -> Result<(), LabError> {
        self.tx.execute(
            "INSERT INTO requests (resource, request_id, delta, result, generation)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &record.resource,
                &record.request_id,
                &record.delta,
                &record.result,
                &record.generation,
            ],
        )?;
        Ok(())
    }

    /// Commits: everything written in this transaction becomes visible at
    /// once, or (on error) none of it does. Its row locks are released.
    pub fn commit(self) -> Result<(), LabError> {
        Ok(self.tx.commit()?)
    }

    /// SQL of your own in this transaction, for what the methods above do
    /// not offer (`execute`, `query`, `query_one`, `query_opt`,
    /// `batch_execute`). The reference never needs it.
    ///
    /// A write run here reaches its checkpoint in the server, like the
    /// methods' writes. A read reaches its checkpoint right after the
    /// statement returns, holding the locks it took, when the server's plan
    /// of the statement reads the generation or the `requests` table (see
    /// [`OwnSql`]). Only a batch (`batch_execute`) cannot be seen into: a
    /// test that needed to pause after a read made there says so instead of
    /// guessing at a mistake.
    ///
    /// Rows, parameter types and the SQLSTATE of a failed statement are
    /// named through [`sql`](mod@sql).
    pub fn sql(&mut self) -> OwnSql<'_, 'a> {
        OwnSql::new(&mut self.tx, self.observer)
    }

    fn update(&mut self, sql: &str, resource: &str, new: i64) -> Result<(), LabError> {
        match self.tx.execute(sql, &[&new, &resource])? {
            0 => Err(LabError::UnknownResource(resource.to_owned())),
            _ => Ok(()),
        }
    }
}

/// The harness's reads of the lab's tables on PostgreSQL, shared with
/// [`PgTx`]'s so a row is read one way. They take a client, which the code
/// under test never has.
#[doc(hidden)]
pub mod rows {
    use super::{LabError, Record, State};

    /// `SELECT … FOR UPDATE NOWAIT` on one resource's row.
    pub fn lock_row(tx: &mut impl postgres::GenericClient, resource: &str) -> Result<(), LabError> {
        tx.query_opt(
            "SELECT 1 FROM resources WHERE name = $1 FOR UPDATE NOWAIT",
            &[&resource],
        )?
        .map(|_| ())
        .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))
    }

    /// Reads one resource's row; a missing row is an unknown resource.
    pub fn read_state(
        client: &mut impl postgres::GenericClient,
        resource: &str,
    ) -> Result<State, LabError> {
        client
            .query_opt(
                "SELECT generation, value FROM resources WHERE name = $1",
                &[&resource],
            )?
            .map(|row| State {
                generation: row.get(0),
                value: row.get(1),
            })
            .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))
    }

    /// A row of `requests`, in the column order of the lab's queries.
    pub fn record_from_row(row: &postgres::Row) -> Record {
        Record {
            resource: row.get(0),
            request_id: row.get(1),
            delta: row.get(2),
            result: row.get(3),
            generation: row.get(4),
        }
    }
}
