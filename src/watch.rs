//! How a SQLite lab connection reaches its checkpoints: in the database,
//! whatever SQL the code under test runs.
//!
//! A checkpoint fired by a `Tx` method would be reached only by code that
//! calls that method; a correct `apply` that writes the value with its own
//! `UPDATE` through [`Tx::sql`](crate::Tx::sql) would never pause, and a
//! test would blame it for a mistake it did not make. So every worker's and
//! authority's connection ([`Lab::connect`](crate::Lab::connect)) carries
//! its own instruments, which only that connection sees:
//!
//! - **Writes**, through temporary triggers. Before a row of `resources`
//!   gets a new `value` ([`Checkpoint::BeforeEffect`]) or a new
//!   `generation` ([`Checkpoint::BeforeInstall`]), and before a row goes
//!   into `requests` ([`Checkpoint::BeforeRecord`]), a trigger calls the
//!   SQL function `fencing_lab_checkpoint`, which runs the hook. An error
//!   from the hook fails the function, so the statement fails as a real
//!   fault would, and `?` turns it back into the hook's [`LabError`].
//! - **Reads**, through SQLite's statement trace. When a statement starts,
//!   the text of it is classified once (which tables and columns it reads,
//!   as SQLite's authorizer reports them while preparing it on a private
//!   in-memory copy of the schema). A statement that reads
//!   `resources.generation` leaves [`Checkpoint::GenerationRead`] pending,
//!   one that reads `requests` leaves [`Checkpoint::RecordRead`]; both fire
//!   when the connection's next statement starts (a `COMMIT` or `ROLLBACK`
//!   too): after the read, before anything else. A read that is a call's
//!   very last statement fires nothing (see `Hooks::around`).
//!
//! The trace and the function find the connection's [`Hooks`] through a
//! per-thread registry: a `Destination` is not `Send`, so its statements
//! always run on the thread that registered it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::functions::FunctionFlags;
use rusqlite::hooks::{AuthAction, Authorization};
use rusqlite::{Connection, ffi};

use crate::LabError;
use crate::checkpoint::{Checkpoint, Hooks};

/// The SQL function the triggers call.
const FUNCTION: &str = "fencing_lab_checkpoint";

/// The triggers, in the connection's `temp` schema: no other connection
/// sees them, and the file is never changed by them.
const TRIGGERS: &str = "
    CREATE TEMP TRIGGER fencing_lab_before_effect
        BEFORE UPDATE OF value ON main.resources
        BEGIN SELECT fencing_lab_checkpoint('before effect'); END;
    CREATE TEMP TRIGGER fencing_lab_before_install
        BEFORE UPDATE OF generation ON main.resources
        BEGIN SELECT fencing_lab_checkpoint('before install'); END;
    CREATE TEMP TRIGGER fencing_lab_before_record
        BEFORE INSERT ON main.requests
        BEGIN SELECT fencing_lab_checkpoint('before record'); END;
";

/// How a fault raised by a hook reads inside SQLite's error message; the
/// conversion from `rusqlite::Error` looks for it (see [`take_fault`]).
const FAULT_MARK: &str = "fencing-lab checkpoint fault: ";

thread_local! {
    /// The hooks of every instrumented connection on this thread, by id.
    static REGISTRY: RefCell<HashMap<usize, Weak<Hooks>>> = RefCell::new(HashMap::new());
    /// The fault a hook raised in a trigger, until `?` picks it up.
    static FAULT: RefCell<Option<LabError>> = const { RefCell::new(None) };
    /// What each statement text reads, classified once per thread.
    static CLASSES: RefCell<Classifier> = RefCell::new(Classifier::new());
}

/// Gives every instrumented connection its own id.
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// Keeps a connection's entry in the registry; dropping it removes the
/// entry. Drop it after the connection (a trace firing after that finds
/// nothing and does nothing).
pub(crate) struct Registration {
    /// The connection's id in the registry.
    id: usize,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // `try_with`: at thread exit the registry may be gone already.
        let _ = REGISTRY.try_with(|registry| registry.borrow_mut().remove(&self.id));
    }
}

/// Instruments `conn` so its statements reach `hooks`' checkpoints.
pub(crate) fn instrument(conn: &Connection, hooks: &Rc<Hooks>) -> Result<Registration, LabError> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    REGISTRY.with(|registry| registry.borrow_mut().insert(id, Rc::downgrade(hooks)));
    let registration = Registration { id };
    conn.create_scalar_function(FUNCTION, 1, FunctionFlags::SQLITE_UTF8, move |ctx| {
        let name: String = ctx.get(0)?;
        let checkpoint = match name.as_str() {
            "before effect" => Checkpoint::BeforeEffect,
            "before install" => Checkpoint::BeforeInstall,
            _ => Checkpoint::BeforeRecord,
        };
        match with_hooks(id, |hooks| hooks.reached(checkpoint)) {
            None | Some(Ok(())) => Ok(rusqlite::types::Null),
            Some(Err(fault)) => {
                let message = format!("{FAULT_MARK}{fault}");
                FAULT.with(|slot| *slot.borrow_mut() = Some(fault));
                Err(rusqlite::Error::UserFunctionError(message.into()))
            }
        }
    })?;
    // The temp schema in memory: on disk it would be one more file to
    // create and sync for every connection.
    conn.execute_batch("PRAGMA temp_store = MEMORY")?;
    conn.execute_batch(TRIGGERS)?;
    // SAFETY: the handle is valid for as long as `conn` is open, and the
    // trace is part of the connection: it goes when the connection closes.
    // The context pointer is the id, never dereferenced.
    let rc = unsafe {
        ffi::sqlite3_trace_v2(
            conn.handle(),
            ffi::SQLITE_TRACE_STMT as c_uint,
            Some(statement_started),
            id as *mut c_void,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(LabError::Database(rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("cannot install the statement trace".to_owned()),
        )));
    }
    Ok(registration)
}

/// If `error` is a fault a hook raised in a trigger, that fault.
pub(crate) fn take_fault(error: &rusqlite::Error) -> Option<LabError> {
    let message = match error {
        rusqlite::Error::SqliteFailure(_, Some(message)) => message,
        _ => return None,
    };
    if !message.starts_with(FAULT_MARK) {
        return None;
    }
    FAULT.with(|slot| slot.borrow_mut().take())
}

/// Runs `f` on the hooks of connection `id`, if it is still registered.
fn with_hooks<T>(id: usize, f: impl FnOnce(&Hooks) -> T) -> Option<T> {
    let hooks = REGISTRY
        .try_with(|registry| registry.borrow().get(&id).and_then(Weak::upgrade))
        .ok()
        .flatten()?;
    Some(f(&hooks))
}

/// The statement trace: a statement (`sql`) is starting on connection
/// `ctx`. What the previous statement read fires now; what this one reads
/// is noted for when it is over.
unsafe extern "C" fn statement_started(
    event: c_uint,
    ctx: *mut c_void,
    _statement: *mut c_void,
    sql: *mut c_void,
) -> c_int {
    if event != ffi::SQLITE_TRACE_STMT as c_uint || sql.is_null() {
        return 0;
    }
    // SAFETY: for SQLITE_TRACE_STMT, SQLite passes the statement's text as
    // a NUL-terminated string that lives for the duration of the call.
    let sql = unsafe { CStr::from_ptr(sql as *const c_char) };
    let Ok(sql) = sql.to_str() else { return 0 };
    // A trigger's program starts with a comment: it belongs to the
    // statement that fired it, which was traced already.
    if sql.starts_with("--") {
        return 0;
    }
    // Nothing may unwind into SQLite. The hooks catch a test's panic
    // themselves; this guards the rest.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        with_hooks(ctx as usize, |hooks| {
            hooks.flush();
            hooks.after_statement(CLASSES.with(|classes| classes.borrow_mut().reads(sql)));
        })
    }));
    0
}

/// Classifies statement texts by what they read, on an in-memory database
/// with the lab's schema whose authorizer records every column a statement
/// would read. Nothing is executed there; each text is prepared once.
struct Classifier {
    /// The in-memory database; `None` if it could not be made (then no
    /// statement counts as a read, which a test reports as a checkpoint
    /// never reached).
    conn: Option<Connection>,
    /// What the authorizer reported for the statement being prepared.
    seen: Arc<Mutex<Vec<(String, String)>>>,
    /// What each text read, once known.
    known: HashMap<String, Vec<Checkpoint>>,
}

impl Classifier {
    fn new() -> Classifier {
        let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let conn = Connection::open_in_memory().ok().filter(|conn| {
            let record = Arc::clone(&seen);
            conn.authorizer(Some(move |context: rusqlite::hooks::AuthContext<'_>| {
                if let AuthAction::Read {
                    table_name,
                    column_name,
                } = context.action
                {
                    record
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((table_name.to_owned(), column_name.to_owned()));
                }
                Authorization::Allow
            }));
            conn.execute_batch(crate::schema::SCHEMA).is_ok()
        });
        Classifier {
            conn,
            seen,
            known: HashMap::new(),
        }
    }

    /// The read checkpoints of a statement `sql`, in the order they fire.
    fn reads(&mut self, sql: &str) -> Vec<Checkpoint> {
        if let Some(known) = self.known.get(sql) {
            return known.clone();
        }
        let Some(conn) = &self.conn else {
            return Vec::new();
        };
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        // A text that does not prepare here (a PRAGMA, a temp object) reads
        // none of the lab's tables.
        let prepared = conn.prepare(sql).is_ok();
        let seen = std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner));
        let mut reads = Vec::new();
        if prepared {
            if seen
                .iter()
                .any(|(table, column)| table == "resources" && column == "generation")
            {
                reads.push(Checkpoint::GenerationRead);
            }
            if seen.iter().any(|(table, _)| table == "requests") {
                reads.push(Checkpoint::RecordRead);
            }
        }
        self.known.insert(sql.to_owned(), reads.clone());
        reads
    }
}
