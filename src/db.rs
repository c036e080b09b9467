//! The destination's database: one SQLite file in a temporary directory, the
//! schema, and the connections that workers and the authority use.
//!
//! A [`Lab`] owns the file. Each [`Destination`] is one connection to it with
//! a busy timeout of **zero** (rusqlite's default would wait five seconds):
//! when another connection holds the write lock, the caller learns it at once
//! as [`LabError::Contention`], which keeps every contention test
//! deterministic. Zero is a choice for observation, not advice for production.
//!
//! Inside a transaction ([`Tx`]) the learner has one method per statement the
//! exercise needs. The SQL is plumbing; which statements to run, in which
//! order, in which kind of transaction, is the exercise.

use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, named_params};
use tempfile::TempDir;

use crate::LabError;
use crate::checkpoint::{Checkpoint, Hooks};
use crate::schema::SCHEMA;
use crate::watch::{self, Registration};

/// The two synthetic resources every lab starts with.
pub const RESOURCES: [&str; 2] = ["fund-A", "fund-B"];

/// The state every lab starts in: both resources at generation 1, value 0.
const START: &str =
    "INSERT INTO resources (name, generation, value) VALUES ('fund-A', 1, 0), ('fund-B', 1, 0);";

/// Which journal the SQLite file uses. The contention claims must hold in
/// both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    /// The classic rollback journal (`journal_mode = DELETE`): one writer,
    /// and a writer's commit waits for readers.
    Rollback,
    /// Write-ahead logging (`journal_mode = WAL`): readers never block the
    /// writer, but there is still one writer at a time.
    Wal,
}

impl Journal {
    /// The name SQLite reports for this mode in `PRAGMA journal_mode`.
    pub fn sqlite_name(self) -> &'static str {
        match self {
            Journal::Rollback => "delete",
            Journal::Wal => "wal",
        }
    }
}

impl fmt::Display for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Journal::Rollback => "rollback journal",
            Journal::Wal => "WAL",
        })
    }
}

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

/// One lab: a fresh SQLite file in its own temporary directory, removed when
/// the last clone of the `Lab` is dropped.
#[derive(Clone)]
pub struct Lab {
    /// Keeps the directory alive; shared by clones so a hook can hold one.
    /// `None` for a file opened with [`Lab::open_existing`], which belongs to
    /// the process that created it.
    _dir: Option<Arc<TempDir>>,
    /// The database file inside it.
    path: PathBuf,
    /// The journal mode the file was created with.
    journal: Journal,
}

impl Lab {
    /// Creates the file, sets the journal mode and loads the schema:
    /// `fund-A` and `fund-B` at generation 1, value 0, no requests.
    ///
    /// Every connection of a lab runs `PRAGMA synchronous = OFF`: SQLite
    /// hands each commit to the operating system and does not wait for the
    /// disk. Locking, isolation and atomicity between connections are
    /// unchanged, and a commit survives the process that made it (the crash
    /// test relies on exactly that); only an operating-system crash or a
    /// power cut could lose it, and nothing in this lab simulates either.
    /// Waiting for the disk was most of the suite's run time. Like the zero
    /// busy timeout, this is a setting for the lab, not advice.
    pub fn new(journal: Journal) -> Result<Lab, LabError> {
        let dir = tempfile::Builder::new()
            .prefix("fencing-lab-")
            .tempdir()
            .map_err(LabError::Io)?;
        let path = dir.path().join("destination.sqlite3");
        let conn = Connection::open(&path)?;
        conn.execute_batch("PRAGMA synchronous = OFF")?;
        // The journal mode is stored in the file for WAL; set it before the
        // schema so every later connection sees the same mode.
        let mode: String = conn.query_row(
            &format!("PRAGMA journal_mode = {}", journal.sqlite_name()),
            [],
            |row| row.get(0),
        )?;
        if mode != journal.sqlite_name() {
            return Err(LabError::JournalMode {
                requested: journal.sqlite_name(),
                got: mode,
            });
        }
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(START)?;
        Ok(Lab {
            _dir: Some(Arc::new(dir)),
            path,
            journal,
        })
    }

    /// Opens a lab file that already exists, typically one another process
    /// created with [`Lab::new`]: the crash test's child process works on its
    /// parent's file this way. The journal mode is read from the file.
    ///
    /// The file and its directory stay their creator's: dropping this `Lab`
    /// removes nothing. A path with no database is an error, not a new empty
    /// file.
    pub fn open_existing(path: impl Into<PathBuf>) -> Result<Lab, LabError> {
        let path = path.into();
        // No SQLITE_OPEN_CREATE: a mistyped path must not become an empty lab.
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
        let journal = if mode.eq_ignore_ascii_case(Journal::Wal.sqlite_name()) {
            Journal::Wal
        } else {
            Journal::Rollback
        };
        Ok(Lab {
            _dir: None,
            path,
            journal,
        })
    }

    /// The journal mode this lab was created with.
    pub fn journal(&self) -> Journal {
        self.journal
    }

    /// The database file (inside a temporary directory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens a new connection for a worker or the authority, instrumented
    /// so that its statements reach the checkpoints (see [`crate::watch`]).
    pub fn connect(&self) -> Result<Destination, LabError> {
        let conn = self.open()?;
        let hooks = Rc::new(Hooks::default());
        let registration = watch::instrument(&conn, &hooks)?;
        Ok(Destination {
            conn,
            hooks,
            _registration: registration,
        })
    }

    /// A plain connection with a zero busy timeout.
    fn open(&self) -> Result<Connection, LabError> {
        let conn = Connection::open(&self.path)?;
        conn.busy_timeout(Duration::ZERO)?;
        conn.execute_batch("PRAGMA synchronous = OFF")?;
        Ok(conn)
    }

    /// Reads a resource's generation and value on a fresh connection, as an
    /// observer outside every transaction under test.
    pub fn state(&self, resource: &str) -> Result<State, LabError> {
        read_state(&self.open()?, resource)
    }

    /// Every recorded request of a resource, ordered by request id.
    pub fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        read_records(&self.open()?, resource)
    }

    /// Puts the file back to how [`Lab::new`] left it, in one transaction:
    /// both resources at generation 1, value 0, no records. For a test that
    /// runs many short cases on one file (the property test), where a new
    /// file per case would cost more than the case. Open connections stay
    /// usable; none may be inside a transaction.
    pub fn restart(&self) -> Result<(), LabError> {
        restart(&self.open()?)
    }

    /// The names of all resources, so a test can prove nothing was created.
    pub fn resource_names(&self) -> Result<Vec<String>, LabError> {
        let conn = self.open()?;
        let mut stmt = conn.prepare("SELECT name FROM resources ORDER BY name")?;
        let rows = stmt.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The journal mode SQLite reports for the file right now.
    pub fn journal_mode_in_file(&self) -> Result<String, LabError> {
        Ok(self
            .open()?
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))?)
    }

    /// Tries to take the write lock on a connection of its own and lets it go
    /// at once: `Err(LabError::Contention)` means somebody else holds it.
    ///
    /// This is the probe of the transaction claims: while `apply` is paused
    /// between validation and effect, the probe must find the lock taken.
    pub fn probe_write_lock(&self) -> Result<(), LabError> {
        let conn = self.open()?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        conn.execute_batch("ROLLBACK")?;
        Ok(())
    }

    /// Opens a connection that holds `BEGIN IMMEDIATE` until the returned
    /// guard is released or dropped: another writer, standing still.
    pub fn hold_write_lock(&self) -> Result<LockHolder, LabError> {
        let conn = self.open()?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(LockHolder { conn })
    }
}

/// A connection holding the write lock (see [`Lab::hold_write_lock`]).
pub struct LockHolder {
    /// The connection inside `BEGIN IMMEDIATE`.
    conn: Connection,
}

impl LockHolder {
    /// Rolls back and lets the lock go.
    pub fn release(self) -> Result<(), LabError> {
        self.conn.execute_batch("ROLLBACK")?;
        Ok(())
    }
}

/// One connection to the destination, as a worker or the authority holds it.
pub struct Destination {
    /// The SQLite connection (busy timeout zero), instrumented.
    conn: Connection,
    /// Its checkpoints: the test's hook and what is pending.
    hooks: Rc<Hooks>,
    /// Its entry in the registry the instruments look in; declared after
    /// `conn` so it goes after the connection closes.
    _registration: Registration,
}

impl Destination {
    /// Begins a transaction. `behavior` is the learner's decision: SQLite's
    /// `DEFERRED` takes no lock until the first statement needs one,
    /// `IMMEDIATE` takes the write lock at once.
    ///
    /// Fails with [`LabError::Contention`] when the lock cannot be had.
    pub fn begin(&mut self, behavior: TransactionBehavior) -> Result<Tx<'_>, LabError> {
        let tx = self.conn.transaction_with_behavior(behavior)?;
        Ok(Tx { tx })
    }

    /// Installs the hook that runs at every checkpoint of this connection.
    pub fn on_checkpoint(
        &mut self,
        hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static,
    ) {
        self.hooks.set(Box::new(hook));
    }

    /// Removes the hook.
    pub fn clear_checkpoint(&mut self) {
        self.hooks.clear();
    }

    /// This connection's checkpoints, to run a call around
    /// ([`Hooks::around`]).
    pub(crate) fn hooks(&self) -> Rc<Hooks> {
        Rc::clone(&self.hooks)
    }

    /// The raw connection, for the harness's counterexamples.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// An open transaction on a [`Destination`]. Dropping it without
/// [`commit`](Tx::commit) rolls everything back, which is what makes `?` on
/// an error safe.
pub struct Tx<'a> {
    /// The rusqlite transaction (rolls back on drop).
    tx: rusqlite::Transaction<'a>,
}

impl Tx<'_> {
    /// Reads the installed generation of `resource`.
    ///
    /// Errors: [`LabError::UnknownResource`]. Like any statement that reads
    /// the generation, it reaches [`Checkpoint::GenerationRead`] once done.
    pub fn installed_generation(&self, resource: &str) -> Result<i64, LabError> {
        Ok(read_state(&self.tx, resource)?.generation)
    }

    /// Writes a new installed generation for `resource`.
    ///
    /// Like any write of the generation, it reaches
    /// [`Checkpoint::BeforeInstall`] first.
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
        // The value alone: reading the generation again would reach
        // `GenerationRead` a second time.
        self.tx
            .prepare_cached("SELECT value FROM resources WHERE name = :name")?
            .query_row(named_params! { ":name": resource }, |row| row.get(0))
            .optional()?
            .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))
    }

    /// Writes a new value for `resource`: the effect.
    ///
    /// Like any write of the value, it reaches [`Checkpoint::BeforeEffect`]
    /// first.
    pub fn set_value(&self, resource: &str, value: i64) -> Result<(), LabError> {
        self.update(
            "UPDATE resources SET value = :new WHERE name = :name",
            resource,
            value,
        )
    }

    /// Looks up the record of `request_id` on `resource`.
    ///
    /// Like any read of `requests`, it reaches [`Checkpoint::RecordRead`]
    /// once done, whether it found a record or not.
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
                record_from_row,
            )
            .optional()?)
    }

    /// Stores a record.
    ///
    /// Like any insert into `requests`, it reaches
    /// [`Checkpoint::BeforeRecord`] first.
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

    /// The connection inside the transaction, for SQL the methods above do
    /// not offer. The reference never needs it; a statement run here
    /// reaches the same checkpoints as the methods' own.
    pub fn sql(&self) -> &Connection {
        &self.tx
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

/// Reads one resource's row; a missing row is an unknown resource.
///
/// This and the statements of [`Tx`] are prepared once per connection
/// (`prepare_cached`): in a debug build, parsing the SQL is a large part of
/// a short query, and the explorer runs thousands of them.
pub(crate) fn read_state(conn: &Connection, resource: &str) -> Result<State, LabError> {
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
pub(crate) fn read_records(conn: &Connection, resource: &str) -> Result<Vec<Record>, LabError> {
    let mut stmt = conn.prepare_cached(
        "SELECT resource, request_id, delta, result, generation FROM requests
         WHERE resource = :resource ORDER BY request_id",
    )?;
    let rows = stmt.query_map(named_params! { ":resource": resource }, record_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Puts the file back to how [`Lab::new`] left it, in one transaction: the
/// two resources at generation 1, value 0, and no records. The explorer
/// starts every schedule from here.
pub(crate) fn restart(conn: &Connection) -> Result<(), LabError> {
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch("DELETE FROM requests; DELETE FROM resources;")?;
    tx.execute_batch(START)?;
    Ok(tx.commit()?)
}

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Record> {
    Ok(Record {
        resource: row.get(0)?,
        request_id: row.get(1)?,
        delta: row.get(2)?,
        result: row.get(3)?,
        generation: row.get(4)?,
    })
}
