//! The destination's database: one SQLite file in a temporary directory, the
//! schema, and the connections that workers and the authority use.
//!
//! A [`Lab`] owns the file. Each [`LabConnection`] is one connection to it with
//! a busy timeout of **zero** (rusqlite's default would wait five seconds):
//! when another connection holds the write lock, the caller learns it at once
//! as [`LabError::Contention`], which keeps every contention test
//! deterministic. Zero is a choice for observation, not advice for production.
//!
//! The learner's code never holds a `LabConnection`: for each call it gets the
//! API's `fencing_lab_api::Destination` on the same connection, which can
//! begin a transaction ([`Tx`]) and nothing else.

use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use tempfile::TempDir;

use crate::checkpoint::{Checkpoint, Hooks, Trace};
use crate::schema::SCHEMA;
use crate::watch::{self, Registration};
use crate::{LabError, Record, State, Tx};
pub(crate) use fencing_lab_api::rows::{read_records, read_state};

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
    /// What its connections did, in the order it happened there.
    trace: Trace,
}

/// The generations the lab starts with, as [`Trace`] counts from them.
pub(crate) const STARTING_GENERATIONS: [(&str, i64); 2] = [("fund-A", 1), ("fund-B", 1)];

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
            trace: Trace::new(&STARTING_GENERATIONS),
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
            trace: Trace::default(),
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
    pub fn connect(&self) -> Result<LabConnection, LabError> {
        let conn = self.open()?;
        let hooks = Rc::new(Hooks::default());
        let registration = watch::instrument(&conn, &hooks)?;
        // Every commit and rollback, in the order the database applies
        // them: SQLite runs these inside the `COMMIT` and `ROLLBACK`.
        let actor = hooks.trace_into(&self.trace);
        let (on_commit, on_rollback) = (self.trace.clone(), self.trace.clone());
        conn.commit_hook(Some(move || {
            on_commit.ended(actor, true);
            // Let the commit go on.
            false
        }));
        conn.rollback_hook(Some(move || on_rollback.ended(actor, false)));
        Ok(LabConnection {
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
        restart(&self.open()?)?;
        self.trace.restart(&STARTING_GENERATIONS);
        Ok(())
    }

    /// What this lab's connections did so far ([`Trace`]).
    pub fn trace(&self) -> &Trace {
        &self.trace
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
pub struct LabConnection {
    /// The SQLite connection (busy timeout zero), instrumented.
    conn: Connection,
    /// Its checkpoints: the test's hook and what is pending.
    hooks: Rc<Hooks>,
    /// Its entry in the registry the instruments look in; declared after
    /// `conn` so it goes after the connection closes.
    _registration: Registration,
}

impl LabConnection {
    /// Begins a transaction. `behavior` is the learner's decision: SQLite's
    /// `DEFERRED` takes no lock until the first statement needs one,
    /// `IMMEDIATE` takes the write lock at once.
    ///
    /// Fails with [`LabError::Contention`] when the lock cannot be had.
    pub fn begin(&mut self, behavior: TransactionBehavior) -> Result<Tx<'_>, LabError> {
        Tx::begin(&self.conn, behavior)
    }

    /// What the learner's code gets for one call: a transaction can be
    /// begun on this connection, and nothing else.
    pub(crate) fn exercise(&mut self) -> fencing_lab_api::Destination<'_> {
        fencing_lab_api::Destination::new(&self.conn)
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

    /// This connection's number in its lab's events ([`Trace`]).
    pub fn actor(&self) -> Option<usize> {
        self.hooks.actor()
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

/// Puts the file back to how [`Lab::new`] left it, in one transaction: the
/// two resources at generation 1, value 0, and no records. The explorer
/// starts every schedule from here.
pub(crate) fn restart(conn: &Connection) -> Result<(), LabError> {
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch("DELETE FROM requests; DELETE FROM resources;")?;
    tx.execute_batch(START)?;
    Ok(tx.commit()?)
}
