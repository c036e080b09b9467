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
//! - **Between transactions**, through the same trace. A statement that
//!   starts outside a transaction after one that started inside it (a
//!   `COMMIT`, a `ROLLBACK`) leaves [`Checkpoint::TransactionEnded`] to
//!   fire as this one starts: the lock is released, nothing else has run.
//!   The call's last commit fires nothing, like its last read.
//! - **What the code under test may not do**, through SQLite's authorizer.
//!   While a call runs ([`Hooks::around`]), every statement the connection
//!   prepares is held to a policy: no schema object of its own (a temporary
//!   view would read the generation unseen, a dropped trigger would silence
//!   a checkpoint), no `ATTACH`, no `PRAGMA` outside a read-only list, no
//!   call of the harness's function from anywhere but its triggers. A
//!   refusal fails the statement and comes back as
//!   [`LabError::NotAllowed`] naming what was refused. Since nothing of the
//!   schema can change, the classifier's copy of it is exact.
//!
//! The trace and the function find the connection's [`Hooks`] through a
//! per-thread registry: a `LabConnection` is not `Send`, so its statements
//! always run on the thread that registered it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::functions::FunctionFlags;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
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

thread_local! {
    /// The hooks of every instrumented connection on this thread, by id.
    static REGISTRY: RefCell<HashMap<usize, Weak<Hooks>>> = RefCell::new(HashMap::new());
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
            Some(Err(fault)) => Err(rusqlite::Error::UserFunctionError(
                fencing_lab_api::fault::hand_back(fault).into(),
            )),
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
    // Last, once the harness's own objects are in place: from here on, a
    // statement prepared while the code under test runs is held to
    // `policy`. `.ci/hostile-observer` turns it off to prove that each
    // hostile case it grades was stopped by it and by nothing else.
    if std::env::var_os(crate::UNGUARDED).is_some() {
        return Ok(registration);
    }
    conn.authorizer(Some(move |context: AuthContext<'_>| {
        let in_call = with_hooks(id, |hooks| hooks.in_call()).unwrap_or(false);
        match policy(&context) {
            Some(refused) if in_call => {
                fencing_lab_api::fault::hand_back(LabError::NotAllowed(refused));
                Authorization::Deny
            }
            _ => Authorization::Allow,
        }
    }));
    Ok(registration)
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
    statement: *mut c_void,
    sql: *mut c_void,
) -> c_int {
    if event != ffi::SQLITE_TRACE_STMT as c_uint || sql.is_null() {
        return 0;
    }
    // SAFETY: for SQLITE_TRACE_STMT, SQLite passes the statement's text as
    // a NUL-terminated string that lives for the duration of the call.
    // A trigger's program is traced with a text of its own (a comment
    // naming the trigger) but the statement that fired it, which was traced
    // already. A statement's own text is the very string SQLite keeps for
    // it, whatever it starts with (a comment included).
    // SAFETY: for SQLITE_TRACE_STMT, `statement` is the running statement.
    let own = unsafe { ffi::sqlite3_sql(statement as *mut ffi::sqlite3_stmt) };
    if !std::ptr::eq(own, sql as *const c_char) {
        return 0;
    }
    // SAFETY: for SQLITE_TRACE_STMT, SQLite passes the statement's text as
    // a NUL-terminated string that lives for the duration of the call.
    let sql = unsafe { CStr::from_ptr(sql as *const c_char) };
    let Ok(sql) = sql.to_str() else { return 0 };
    // SAFETY: the running statement's connection, open for the call.
    let in_transaction = unsafe {
        ffi::sqlite3_get_autocommit(ffi::sqlite3_db_handle(statement as *mut ffi::sqlite3_stmt))
            == 0
    };
    // Nothing may unwind into SQLite. The hooks catch a test's panic
    // themselves; this guards the rest.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        with_hooks(ctx as usize, |hooks| {
            hooks.statement_starts(
                in_transaction,
                CLASSES.with(|classes| classes.borrow_mut().reads(sql)),
            );
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

/// The harness's SQL functions, which only its triggers may call.
const HARNESS_FUNCTIONS: &str = "fencing_lab";

/// `PRAGMA`s that only read, and that may name a table or index.
const READ_PRAGMAS_WITH_ARGUMENT: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
];

/// `PRAGMA`s that only read when given no value.
const READ_PRAGMAS: &[&str] = &[
    "journal_mode",
    "user_version",
    "schema_version",
    "data_version",
    "page_size",
    "page_count",
    "freelist_count",
    "encoding",
    "foreign_keys",
    "compile_options",
    "function_list",
    "pragma_list",
    "collation_list",
];

/// What the code under test may not do on a lab connection, as SQLite's
/// authorizer reports each part of a statement being prepared: `Some` with
/// what was refused, in words, or `None` when it is allowed.
///
/// Refused: creating, changing or dropping any schema object (temporary
/// ones too: a temporary view or trigger of its own would change what the
/// harness's triggers and read classification see), `ATTACH` and `DETACH`
/// (another file, or a way to learn which files exist), a `PRAGMA` outside
/// a short read-only list (`writable_schema`, `busy_timeout` and the rest
/// change the connection the harness observes), calling the harness's
/// functions from anywhere but its triggers, `load_extension`, and
/// inserting or deleting a row of `resources`. Reads and writes of the
/// lab's tables otherwise, transactions and savepoints are allowed: they
/// are the exercise.
fn policy(context: &AuthContext<'_>) -> Option<String> {
    match context.action {
        AuthAction::Read { .. }
        | AuthAction::Select
        | AuthAction::Recursive
        | AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. } => None,
        // SQLite refuses a write of its schema tables by itself while
        // `writable_schema` is off, which no call may turn on; a `CREATE`
        // or `DROP` writes them too, and is refused below by its name.
        //
        // A row of `resources` is never created or removed by a call: the
        // two funds exist from the start. An `INSERT` (a `REPLACE`, an
        // upsert) or a `DELETE` there would change a value or a generation
        // without the `UPDATE` the write checkpoints' triggers watch for.
        AuthAction::Insert {
            table_name: "resources",
        } => Some(
            "inserting or replacing a row of resources (a call changes a resource with UPDATE)"
                .to_owned(),
        ),
        AuthAction::Delete {
            table_name: "resources",
        } => Some("deleting a row of resources (a call changes a resource with UPDATE)".to_owned()),
        AuthAction::Insert { .. } | AuthAction::Update { .. } | AuthAction::Delete { .. } => None,
        AuthAction::Function { function_name } => {
            let from_trigger = context
                .accessor
                .is_some_and(|trigger| trigger.starts_with(HARNESS_FUNCTIONS));
            refused_function(function_name, from_trigger)
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => refused_pragma(pragma_name, pragma_value),
        action => Some(refused_statement(&action)),
    }
}

/// A call of `function_name`, refused when it is the harness's and not
/// made by the harness's triggers, or when it loads code.
fn refused_function(function_name: &str, from_trigger: bool) -> Option<String> {
    let name = function_name.to_ascii_lowercase();
    if name.starts_with(HARNESS_FUNCTIONS) && !from_trigger {
        Some(format!("calling the harness's function {function_name}"))
    } else if name == "load_extension" || name == "fts3_tokenizer" {
        Some(format!("calling {function_name}"))
    } else {
        None
    }
}

/// A `PRAGMA`, refused unless it only reads.
fn refused_pragma(pragma_name: &str, pragma_value: Option<&str>) -> Option<String> {
    let name = pragma_name.to_ascii_lowercase();
    let reads = READ_PRAGMAS_WITH_ARGUMENT.contains(&name.as_str())
        || (READ_PRAGMAS.contains(&name.as_str()) && pragma_value.is_none());
    if reads {
        return None;
    }
    Some(match pragma_value {
        Some(value) => format!("PRAGMA {pragma_name} = {value}"),
        None => format!("PRAGMA {pragma_name}"),
    })
}

/// Any other statement, refused: a change of the schema, `ATTACH`,
/// `DETACH`, and whatever SQLite adds that this does not know, in words.
fn refused_statement(action: &AuthAction<'_>) -> String {
    match *action {
        AuthAction::CreateIndex { index_name, .. }
        | AuthAction::CreateTempIndex { index_name, .. } => {
            format!("creating the index {index_name}")
        }
        AuthAction::CreateTable { table_name } | AuthAction::CreateTempTable { table_name } => {
            format!("creating the table {table_name}")
        }
        AuthAction::CreateTrigger { trigger_name, .. }
        | AuthAction::CreateTempTrigger { trigger_name, .. } => {
            format!("creating the trigger {trigger_name}")
        }
        AuthAction::CreateView { view_name } | AuthAction::CreateTempView { view_name } => {
            format!("creating the view {view_name}")
        }
        AuthAction::DropIndex { index_name, .. } | AuthAction::DropTempIndex { index_name, .. } => {
            format!("dropping the index {index_name}")
        }
        AuthAction::DropTable { table_name } | AuthAction::DropTempTable { table_name } => {
            format!("dropping the table {table_name}")
        }
        AuthAction::DropTrigger { trigger_name, .. }
        | AuthAction::DropTempTrigger { trigger_name, .. } => {
            format!("dropping the trigger {trigger_name}")
        }
        AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => {
            format!("dropping the view {view_name}")
        }
        AuthAction::Attach { .. } => "ATTACH".to_owned(),
        AuthAction::Detach { .. } => "DETACH".to_owned(),
        AuthAction::AlterTable { table_name, .. } => format!("altering the table {table_name}"),
        AuthAction::Reindex { .. } => "REINDEX".to_owned(),
        AuthAction::Analyze { .. } => "ANALYZE".to_owned(),
        AuthAction::CreateVtable { table_name, .. } => {
            format!("creating the virtual table {table_name}")
        }
        AuthAction::DropVtable { table_name, .. } => {
            format!("dropping the virtual table {table_name}")
        }
        _ => "a statement SQLite's authorizer could not name".to_owned(),
    }
}
