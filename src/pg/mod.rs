//! The PostgreSQL destination (Cargo feature `postgres`): the same two
//! functions, the same schema and the same claims, on a database server that
//! workers reach over TCP.
//!
//! What changes is the lock. SQLite has one write lock for the whole file;
//! `BEGIN IMMEDIATE` takes it. PostgreSQL locks rows: a transaction that
//! reads a resource's row with `SELECT … FOR UPDATE` holds that row, and only
//! that row, until it commits. So here the learner's decision is not the kind
//! of transaction but whether, and when, to lock the row ([`PgTx::lock_row`])
//! before reading the generation ([`PgTx::installed_generation`]).
//!
//! Contention stays immediate and typed, as in the SQLite lab: the row lock
//! is taken with `NOWAIT`, and every worker's and the authority's session
//! runs with `lock_timeout = 1ms`,
//! so a statement that would wait for a lock fails at once with SQLSTATE
//! 55P03, which becomes [`LabError::Contention`]. A test whose destination is
//! paused at a checkpoint can never hang on it. (Only the checkpoints' own
//! trigger function waits longer, at its gate, under a `lock_timeout` of its
//! own that ends when it returns.) Serialization failures
//! (40001) become [`LabError::SerializationFailure`]; the lab's transactions
//! run at READ COMMITTED, where these statements do not raise it.
//!
//! Each [`PgLab`] is its own schema on the process's [`server`], dropped with
//! the lab: the tests share a server but never a table.
//!
//! Checkpoints are reached in the server, like SQLite's in the database:
//! each lab's schema has row triggers before every write of a value, a
//! generation or a record, whoever runs it ([`PgTx::set_value`] or an
//! `UPDATE` of one's own through [`PgTx::sql`]). While a call with a hook
//! runs, the trigger announces its checkpoint and waits, inside the
//! statement and holding its row lock, at a gate the lab's control session
//! holds; the calling thread runs the hook, then lets the statement go on or
//! fail with the hook's fault. So the learner's code runs on a thread of its
//! own during such a call, and a [`PgConnection`] is `Send`. Reads cannot be
//! watched that way (PostgreSQL has no trigger on `SELECT`):
//! [`Checkpoint::GenerationRead`] and [`Checkpoint::RecordRead`] fire from
//! [`PgTx::installed_generation`] and [`PgTx::find_record`], and right after
//! a statement of the code's own ([`PgTx::sql`]) whose plan, as the server
//! explains it, reads the generation or the `requests` table ([`OwnSql`]).
//! Only SQL the harness cannot ask the plan of (a batch) is noted, so a test
//! that needed a pause after such a read fails as NOT CHECKED and says why.
//! The protocol is described in `gate`'s source (`src/pg/gate.rs`).

#[cfg(feature = "postgres-sql")]
pub mod contract;
mod gate;
pub mod server;

use fencing_lab_api::pg::rows::{lock_row, read_state, record_from_row};
pub use fencing_lab_api::pg::{OwnSql, PgTx};

use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use postgres::{Client, Config, NoTls};

use crate::checkpoint::Trace;
use crate::checkpoint::{Checkpoint, Hooks};
use crate::claims::facts::Call as CallFact;
use crate::claims::{PG_APPLY, PG_INSTALL};
use crate::counterexample::{Direct, Param, pg_params};
use crate::db::STARTING_GENERATIONS;
use crate::facts;
use crate::panics::guard;
use crate::{LabError, Outcome, Record, Session, State, Store};

/// The authority installs `new_generation` on `resource` (the learner's
/// `exercises/postgres/install_generation.rs`).
pub fn install_generation(
    db: &mut PgConnection,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    let call = CallFact::Install {
        resource: resource.to_owned(),
        generation: new_generation,
    };
    db.hooks().call(call, facts::install_answer, || {
        gate::serve(db, &[Checkpoint::GenerationRead], |db| {
            guard("install_generation", PG_INSTALL, || {
                (crate::implementation().postgres.install_generation)(
                    &mut db.exercise(),
                    resource,
                    new_generation,
                )
            })
        })
    })
}

/// The worker asks the destination to apply `delta` to `resource` under
/// `generation`, as request `request_id` (the learner's
/// `exercises/postgres/apply.rs`).
pub fn apply(
    db: &mut PgConnection,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    let call = CallFact::Apply {
        resource: resource.to_owned(),
        generation,
        request_id: request_id.to_owned(),
        delta,
    };
    db.hooks().call(call, facts::answer, || {
        gate::serve(
            db,
            &[Checkpoint::GenerationRead, Checkpoint::RecordRead],
            |db| {
                guard("apply", PG_APPLY, || {
                    (crate::implementation().postgres.apply)(
                        &mut db.exercise(),
                        resource,
                        generation,
                        request_id,
                        delta,
                    )
                })
            },
        )
    })
}

/// The schema, the same tables as the SQLite lab's. `bigint` refuses a value
/// past `i64::MAX` instead of widening it.
const SCHEMA: &str = "
    CREATE TABLE resources (
        name       text   NOT NULL PRIMARY KEY,
        generation bigint NOT NULL CHECK (generation >= 1),
        value      bigint NOT NULL
    );

    CREATE TABLE requests (
        resource   text   NOT NULL REFERENCES resources (name),
        request_id text   NOT NULL CHECK (request_id <> '')
                          CONSTRAINT request_id_length CHECK (octet_length(request_id) <= 255),
        delta      bigint NOT NULL,
        result     bigint NOT NULL,
        generation bigint NOT NULL,
        PRIMARY KEY (resource, request_id)
    );
";

/// The state every lab starts in: both resources at generation 1, value 0.
const START: &str =
    "INSERT INTO resources (name, generation, value) VALUES ('fund-A', 1, 0), ('fund-B', 1, 0);";

/// How long a session waits for a lock.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// Workers, the authority and the probes: 1 ms, so contention is
    /// immediate (see the module's docs).
    No,
    /// The harness's own plumbing (creating and dropping a lab's schema,
    /// the observer): ten seconds. Catalog locks taken by other tests'
    /// setup are not the contention under test.
    Plumbing,
}

impl Wait {
    fn lock_timeout(self) -> &'static str {
        match self {
            Wait::No => "1ms",
            Wait::Plumbing => "10s",
        }
    }
}

/// The role the Rust track's sessions log in as, workers' and authority's
/// alike: not a superuser, owner of nothing, with `USAGE` on each lab's
/// schema and `SELECT`, `INSERT`, `UPDATE`, `DELETE` on its two tables. So
/// the code under test cannot disable the checkpoints' triggers (that takes
/// the table's owner), run programs or read files (`COPY … PROGRAM`,
/// `pg_read_file`: a superuser's), change the server (`ALTER SYSTEM`),
/// switch triggers off for its session (`session_replication_role`) or
/// become another role. The harness's own sessions (the observer, the
/// gates' control) stay the lab's user, and never run the learner's SQL.
pub const LEARNER: &str = "fencing_learner";

/// The environment variable that hands a child process its parent's lab:
/// `<schema> <conninfo>` (see [`PgLab::address`]).
pub const LAB_VARIABLE: &str = "FENCING_LAB_PG_LAB";

/// One lab on the server: its own schema with `fund-A` and `fund-B` at
/// generation 1, value 0. Clones share it; the last one drops the schema
/// on a shared server.
#[derive(Clone)]
pub struct PgLab {
    inner: Arc<Inner>,
}

struct Inner {
    /// The server's connection string, without options.
    conninfo: String,
    /// This lab's schema, the `search_path` of its sessions.
    schema: String,
    /// Whether the schema is dropped when the last clone goes: when this
    /// process made it on a server others use (named by
    /// `FENCING_LAB_PG_URL`). A private server goes, with every schema in
    /// it, when the process ends.
    dropped: bool,
    /// A session for the observer's reads, opened on first use.
    observer: Mutex<Option<Client>>,
    /// The session that holds the gates of paused sessions (see
    /// `src/pg/gate.rs`), opened on first use.
    control: Mutex<Option<Client>>,
    /// What its sessions did: calls, checkpoints and answers (no commits:
    /// the server runs no hook of the client's inside a `COMMIT`).
    trace: Trace,
}

impl PgLab {
    /// A fresh lab on the process's server, starting one if needed (see
    /// [`server::shared`]).
    pub fn new() -> Result<PgLab, LabError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let server = server::shared()?;
        // Unique on a shared server too: process id, a counter, and the
        // clock for a process id that an earlier run used.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let schema = format!(
            "lab_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // The session that makes the schema stays on as the observer's:
        // each session is a server process to start and to end, and a test
        // makes a lab for itself alone.
        let mut observer =
            connect(&server.conninfo, None, Wait::Plumbing, None).map_err(|error| {
                LabError::ServerUnavailable(format!(
                    "cannot connect to {}: {}",
                    server.origin,
                    crate::describe_error(&error)
                ))
            })?;
        // One batch, so one transaction: the schema, its tables, the
        // checkpoints' triggers on them, and the learner's role's rights.
        // The role once per process, before any lab grants it a right: a
        // lab made on another thread meanwhile waits here.
        static LEARNER_MADE: Mutex<bool> = Mutex::new(false);
        {
            let mut made = LEARNER_MADE
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if !*made {
                observer.batch_execute(&format!(
                    "DO $$ BEGIN CREATE ROLE {LEARNER} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE
                                    NOREPLICATION NOBYPASSRLS;
                     EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;"
                ))?;
                // The watch out of the learner's roles' sight, on the lab's
                // own server only (see `gate::HIDDEN`).
                if !server.shared_by_others() && std::env::var_os(crate::UNGUARDED).is_none() {
                    observer.batch_execute(gate::HIDDEN)?;
                }
                *made = true;
            }
        }
        observer.batch_execute(&format!(
            "BEGIN; CREATE SCHEMA {schema}; SET search_path = {schema};{SCHEMA}{START}{}
             GRANT USAGE ON SCHEMA {schema} TO {LEARNER};
             GRANT SELECT, INSERT, UPDATE, DELETE ON resources, requests TO {LEARNER};
             COMMIT;",
            gate::triggers(&schema)
        ))?;
        Ok(PgLab {
            inner: Arc::new(Inner {
                conninfo: server.conninfo.clone(),
                schema,
                dropped: server.shared_by_others(),
                observer: Mutex::new(Some(observer)),
                control: Mutex::new(None),
                trace: Trace::new(&STARTING_GENERATIONS),
            }),
        })
    }

    /// Opens a lab another process created, from its [`address`](Self::address):
    /// the multi-process test's workers find their parent's lab this way.
    /// Dropping it removes nothing.
    pub fn open_existing(address: &str) -> Result<PgLab, LabError> {
        let (schema, conninfo) = address.split_once(' ').ok_or_else(|| {
            LabError::ServerUnavailable(format!("malformed lab address {address:?}"))
        })?;
        Ok(PgLab {
            inner: Arc::new(Inner {
                conninfo: conninfo.to_owned(),
                schema: schema.to_owned(),
                dropped: false,
                observer: Mutex::new(None),
                control: Mutex::new(None),
                trace: Trace::default(),
            }),
        })
    }

    /// This lab's schema.
    #[cfg(feature = "postgres-sql")]
    pub(crate) fn schema(&self) -> &str {
        &self.inner.schema
    }

    /// Runs `sql` (a batch) on the observer's session: the harness's own
    /// setup, as the lab's user.
    #[cfg(feature = "postgres-sql")]
    pub(crate) fn setup(&self, sql: &str) -> Result<(), LabError> {
        self.observe(|client| Ok(client.batch_execute(sql)?))
    }

    /// Where another process finds this lab: `<schema> <conninfo>`.
    pub fn address(&self) -> String {
        format!("{} {}", self.inner.schema, self.inner.conninfo)
    }

    /// Opens a new session for a worker or the authority, as the role
    /// [`LEARNER`]: the code under test runs its SQL there, and may read
    /// and write the lab's two tables and nothing else.
    pub fn connect(&self) -> Result<PgConnection, LabError> {
        match std::env::var_os(crate::UNGUARDED) {
            Some(_) => self.connect_as(None),
            None => self.connect_as(Some(LEARNER)),
        }
    }

    /// Opens a new session as the server's role `role` (lesson L8's
    /// owner, authority or worker), or as the lab's own user.
    pub(crate) fn connect_as(&self, role: Option<&str>) -> Result<PgConnection, LabError> {
        let link = Arc::new(gate::Link::default());
        let notices = Arc::clone(&link);
        let mut config = config(&self.inner.conninfo, Some(&self.inner.schema), Wait::No)?;
        if let Some(role) = role {
            config.user(role);
        }
        config.notice_callback(move |notice| notices.notice(&notice));
        let mut client = config.connect(NoTls)?;
        // Asked now, for every session alike: asked when a hook is first
        // armed, it would be one more statement in a watched call.
        let session: i32 = client.query_one("SELECT pg_backend_pid()", &[])?.get(0);
        let connection = PgConnection {
            client,
            link,
            lab: self.clone(),
            id: gate::new_id(),
            session,
        };
        connection.hooks().trace_into(&self.inner.trace);
        Ok(connection)
    }

    /// What this lab's sessions did so far ([`Trace`]).
    pub fn trace(&self) -> &Trace {
        &self.inner.trace
    }

    /// A plain session in this lab's schema.
    fn connect_client(&self, wait: Wait) -> Result<Client, LabError> {
        connect(&self.inner.conninfo, Some(&self.inner.schema), wait, None)
    }

    /// Runs `act` on the control session, which holds the gates.
    fn control<T>(
        &self,
        act: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, LabError> {
        let mut control = self
            .inner
            .control
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let client = match control.as_mut() {
            Some(client) => client,
            None => control.insert(self.connect_client(Wait::Plumbing)?),
        };
        Ok(act(client)?)
    }

    /// Runs `read` on the observer's session.
    fn observe<T>(
        &self,
        read: impl FnOnce(&mut Client) -> Result<T, LabError>,
    ) -> Result<T, LabError> {
        let mut observer = self
            .inner
            .observer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let client = match observer.as_mut() {
            Some(client) => client,
            None => observer.insert(self.connect_client(Wait::Plumbing)?),
        };
        read(client)
    }

    /// Reads a resource's generation and value, outside every transaction
    /// under test. A plain read never waits for a row lock in PostgreSQL.
    pub fn state(&self, resource: &str) -> Result<State, LabError> {
        self.observe(|client| read_state(client, resource))
    }

    /// Every recorded request of a resource, ordered by request id.
    pub fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        self.observe(|client| {
            Ok(client
                .query(
                    "SELECT resource, request_id, delta, result, generation FROM requests
                     WHERE resource = $1 ORDER BY request_id",
                    &[&resource],
                )?
                .iter()
                .map(record_from_row)
                .collect())
        })
    }

    /// Puts the lab back to how [`PgLab::new`] left it, in one transaction
    /// on the observer's session: both resources at generation 1, value 0,
    /// no records. For a test that runs many short cases on one lab (the
    /// property test), where a new schema per case would cost more than the
    /// case. Open sessions stay usable; none may be inside a transaction.
    pub fn restart(&self) -> Result<(), LabError> {
        self.observe(|client| {
            Ok(client.batch_execute(&format!(
                "BEGIN; DELETE FROM requests; DELETE FROM resources; {START} COMMIT;"
            ))?)
        })?;
        self.inner.trace.restart(&STARTING_GENERATIONS);
        Ok(())
    }

    /// The names of all resources, so a test can prove nothing was created.
    pub fn resource_names(&self) -> Result<Vec<String>, LabError> {
        self.observe(|client| {
            Ok(client
                .query("SELECT name FROM resources ORDER BY name", &[])?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })
    }

    /// The transaction session `pid` is in right now, as the server names
    /// it (its virtual transaction id, `backend/local`), or `None` outside
    /// a transaction. Asked from the observer's session, it works while
    /// `pid` is paused at a checkpoint: two checkpoints with the same answer
    /// fell in one transaction.
    pub fn transaction_of(&self, pid: i32) -> Result<Option<String>, LabError> {
        self.observe(|client| {
            Ok(client
                .query_opt(
                    "SELECT virtualxid FROM pg_catalog.pg_locks
                     WHERE locktype = 'virtualxid' AND pid = $1 AND granted
                       AND mode = 'ExclusiveLock'",
                    &[&pid],
                )?
                .map(|row| row.get(0)))
        })
    }

    /// Tries to lock `resource`'s row on a session of its own and lets it go
    /// at once: `Err(LabError::Contention)` means another transaction holds
    /// it. Other rows are not touched.
    pub fn probe_row_lock(&self, resource: &str) -> Result<(), LabError> {
        let mut client = self.connect_client(Wait::No)?;
        let mut tx = client.transaction()?;
        lock_row(&mut tx, resource)?;
        Ok(tx.rollback()?)
    }

    /// Opens a session that holds `resource`'s row lock until the returned
    /// guard is released or dropped: another writer, standing still.
    pub fn hold_row_lock(&self, resource: &str) -> Result<RowLockHolder, LabError> {
        let mut client = self.connect_client(Wait::No)?;
        client.batch_execute("BEGIN")?;
        lock_row(&mut client, resource)?;
        Ok(RowLockHolder { client })
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if !self.dropped {
            return;
        }
        // Best effort: a schema left behind goes with the server's data.
        if let Ok(observer) = self.observer.get_mut() {
            observer.take();
        }
        if let Ok(control) = self.control.get_mut() {
            control.take();
        }
        if let Ok(mut admin) = connect(&self.conninfo, None, Wait::Plumbing, None) {
            let _ = admin.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.schema));
        }
    }
}

/// The PostgreSQL track as the shared claims see any destination.
impl Store for PgLab {
    type Session = PgConnection;

    fn connect(&self) -> Result<Self::Session, LabError> {
        PgLab::connect(self)
    }

    fn state(&self, resource: &str) -> Result<State, LabError> {
        PgLab::state(self, resource)
    }

    fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        PgLab::records(self, resource)
    }

    fn resource_names(&self) -> Result<Vec<String>, LabError> {
        PgLab::resource_names(self)
    }

    fn direct_sql_write(&self, resource: &str, value: i64) -> Result<(), LabError> {
        crate::counterexample::direct_sql_write(&mut self.connect()?, resource, value)
    }

    fn restore_generation(&self, resource: &str, generation: i64) -> Result<(), LabError> {
        crate::counterexample::restore_generation(&mut self.connect()?, resource, generation)
    }

    fn restart(&self) -> Result<(), LabError> {
        PgLab::restart(self)
    }

    fn trace(&self) -> Option<Trace> {
        Some(self.inner.trace.clone())
    }
}

/// A session as the shared claims drive it.
impl Session for PgConnection {
    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        apply(self, resource, generation, request_id, delta)
    }

    fn install_generation(&mut self, resource: &str, new_generation: i64) -> Result<(), LabError> {
        install_generation(self, resource, new_generation)
    }

    fn unfenced_write(
        &mut self,
        resource: &str,
        held_generation: i64,
        delta: i64,
    ) -> Result<i64, LabError> {
        crate::counterexample::unfenced_write(self, resource, held_generation, delta)
    }

    fn on_checkpoint(&mut self, hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static) {
        PgConnection::on_checkpoint(self, hook);
    }

    fn clear_checkpoint(&mut self) {
        PgConnection::clear_checkpoint(self);
    }

    fn unobserved(&self) -> Option<&'static str> {
        PgConnection::unobserved(self)
    }

    fn traced(&self) -> Option<(Trace, usize)> {
        self.hooks().tracer()
    }
}

/// The counterexamples (`crate::counterexample`) run on a PostgreSQL
/// session as on a SQLite connection.
impl Direct for PgConnection {
    fn query_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<i64>, LabError> {
        Ok(self
            .client()
            .query_opt(sql, &pg_params(params))?
            .map(|row| row.get(0)))
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), LabError> {
        self.client().execute(sql, &pg_params(params))?;
        Ok(())
    }

    fn hooks(&self) -> Rc<Hooks> {
        PgConnection::hooks(self)
    }
}

/// The parameters as the PostgreSQL client takes them.
/// Which of the two functions a call runs: on the SQL functions' track
/// each runs on a server session of its own role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `apply`, the worker's.
    Apply,
    /// `install_generation`, the authority's.
    Install,
}

/// What the row-lock claims (L3.1 to L3.3, L3.7) ask of a lab on the server
/// beyond any [`Store`](crate::Store): a row held or probed from a session
/// of the harness's own, and which server transaction a paused call is in.
/// The PostgreSQL track's [`PgLab`] has it, and so has the SQL functions'
/// lab, whose tests are the same file.
pub trait RowLocks: crate::Store + Send {
    /// Tries to lock `resource`'s row and lets it go at once:
    /// `Err(LabError::Contention)` means another transaction holds it.
    fn probe_row_lock(&self, resource: &str) -> Result<(), LabError>;

    /// A session that holds `resource`'s row lock until released.
    fn hold_row_lock(&self, resource: &str) -> Result<RowLockHolder, LabError>;

    /// The backend pid of the server session that `call` runs on for
    /// `session`, opened if need be, for [`RowLocks::transaction_of`].
    fn backend_pid(session: &mut Self::Session, call: Call) -> Result<i32, LabError>;

    /// The transaction session `pid` is in right now, as the server names
    /// it, or `None` outside one.
    fn transaction_of(&self, pid: i32) -> Result<Option<String>, LabError>;
}

impl RowLocks for PgLab {
    fn probe_row_lock(&self, resource: &str) -> Result<(), LabError> {
        PgLab::probe_row_lock(self, resource)
    }

    fn hold_row_lock(&self, resource: &str) -> Result<RowLockHolder, LabError> {
        PgLab::hold_row_lock(self, resource)
    }

    fn backend_pid(session: &mut PgConnection, _call: Call) -> Result<i32, LabError> {
        session.backend_pid()
    }

    fn transaction_of(&self, pid: i32) -> Result<Option<String>, LabError> {
        PgLab::transaction_of(self, pid)
    }
}

/// A session holding one row lock (see [`PgLab::hold_row_lock`]).
pub struct RowLockHolder {
    /// The session inside its transaction.
    client: Client,
}

impl RowLockHolder {
    /// Rolls back and lets the row go.
    pub fn release(mut self) -> Result<(), LabError> {
        Ok(self.client.batch_execute("ROLLBACK")?)
    }
}

/// What a session does with a notice from the server.
type Notices = Box<dyn Fn(postgres::error::DbError) + Send + Sync>;

/// A session on `conninfo`, in `schema` when given, with the lab's settings;
/// `notices` hears the server's notices (the checkpoints' announcements).
fn connect(
    conninfo: &str,
    schema: Option<&str>,
    wait: Wait,
    notices: Option<Notices>,
) -> Result<Client, LabError> {
    let mut config = config(conninfo, schema, wait)?;
    if let Some(notices) = notices {
        config.notice_callback(notices);
    }
    Ok(config.connect(NoTls)?)
}

/// How a session on `conninfo` connects, in `schema` when given, with the
/// lab's settings.
fn config(conninfo: &str, schema: Option<&str>, wait: Wait) -> Result<Config, LabError> {
    let mut config: Config = conninfo
        .parse()
        .map_err(|error| LabError::ServerUnavailable(format!("bad connection string: {error}")))?;
    match schema {
        Some(schema) => config.options(&format!(
            "-c lock_timeout={} -c search_path={schema}",
            wait.lock_timeout()
        )),
        None => config.options(&format!("-c lock_timeout={}", wait.lock_timeout())),
    };
    Ok(config)
}

/// One session to the server, as a worker or the authority holds it.
///
/// It is `Send`: while a call with a hook runs, the learner's code uses it
/// on a thread of its own, and the calling thread runs the hook (see
/// `src/pg/gate.rs`). The hook itself stays on the thread that installed it.
pub struct PgConnection {
    /// The session (lock timeout 1 ms, this lab's schema).
    client: Client,
    /// What the learner's thread shares with the thread serving its
    /// checkpoints.
    link: Arc<gate::Link>,
    /// The lab, whose control session holds this session's gate.
    lab: PgLab,
    /// This session's key for its hooks (kept per thread, see `src/pg/gate.rs`).
    id: u64,
    /// The session's backend pid, the key of its gate (asked at connect).
    session: i32,
}

impl PgConnection {
    /// Begins a transaction at READ COMMITTED, PostgreSQL's default. It
    /// locks nothing by itself: rows are locked by the statements that
    /// touch them ([`PgTx::lock_row`] first of all).
    pub fn begin(&mut self) -> Result<PgTx<'_>, LabError> {
        let PgConnection { client, link, .. } = self;
        PgTx::begin(client, &**link)
    }

    /// What the learner's code gets for one call: a transaction can be
    /// begun on this session, and nothing else.
    pub(crate) fn exercise(&mut self) -> fencing_lab_api::pg::PgDestination<'_> {
        let PgConnection { client, link, .. } = self;
        fencing_lab_api::pg::PgDestination::new(client, &**link)
    }

    /// Installs the hook that runs at every checkpoint of this session, on
    /// the thread that installs it.
    pub fn on_checkpoint(
        &mut self,
        hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static,
    ) {
        self.hooks().set(Box::new(hook));
    }

    /// Removes the hook.
    pub fn clear_checkpoint(&mut self) {
        self.hooks().clear();
    }

    /// This session's checkpoints on this thread, to run a call around.
    pub(crate) fn hooks(&self) -> Rc<Hooks> {
        gate::hooks(self.id)
    }

    /// The session's backend pid, which [`PgLab::transaction_of`] takes.
    pub fn backend_pid(&mut self) -> Result<i32, LabError> {
        Ok(self.session)
    }

    /// Why the last call could not be fully observed, if it could not.
    pub fn unobserved(&self) -> Option<&'static str> {
        self.hooks().unobserved()
    }

    /// The session's backend pid, from which the lab makes its gate's keys.
    fn session(&self) -> i32 {
        self.session
    }

    /// The raw session, for the harness's counterexamples.
    pub(crate) fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        gate::forget(self.id);
    }
}
