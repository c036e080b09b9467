//! Lesson 8, the SQL track (Cargo feature `postgres-sql`): the contract
//! written inside the database, as two PL/pgSQL functions
//! (`exercises/postgres/contract.sql`), and roles that decide who may call
//! which.
//!
//! The server gets three roles, made once per server:
//!
//! - [`OWNER`] owns the lab's tables and the learner's functions. It loads
//!   the learner's file, and only it may write the tables directly.
//! - [`AUTHORITY`] may call `install_generation`, nothing else.
//! - [`WORKER`] may call `apply`, nothing else.
//!
//! The functions run `SECURITY DEFINER`, with the owner's rights, so the
//! worker writes the value only through `apply`; who may call each function
//! is the learner's `GRANT`s. The harness's part stops at the roles, the
//! schema's privileges and the tables' owner.
//!
//! An [`SqlSession`] is a worker's and the authority's connection at once:
//! `apply` runs on a session logged in as the worker, `install_generation` on
//! one logged in as the authority, the counterexamples (a direct write, a
//! restore) on one logged in as the owner, each opened when first needed.
//! Every call is one statement in a transaction of its own (two round trips:
//! the client prepares the statement, then runs it), where the PostgreSQL
//! track's `apply` takes fourteen.
//! The checkpoints are the PostgreSQL track's gate: the write triggers fire
//! inside the functions as they do for any `UPDATE`, and a row security
//! policy forced on each table fires the read checkpoints once per
//! statement of a function that reads the table, however many rows it
//! reads (`gate::reads`). A read's checkpoint comes *before* any lock
//! the reading statement takes (a `FOR UPDATE` locks after the row is
//! read), where the other tracks' comes after the read returned: paused
//! there, correct code holds no lock yet, and is judged by what it then
//! does with a row another session changed meanwhile.
//!
//! What the learner's file may do is checked on the database, not on its
//! text: it runs as the owner, never as a superuser (so no file access, no
//! programs, no other role's objects), and once it has run the owner loses
//! the right to create objects, and the harness checks the catalogue: the
//! same tables, the checkpoints' triggers enabled and their policies as
//! made, no view or rule, the two functions there. A file that breaks one
//! of these fails every test with what it broke.

mod refusal;
mod session;

use std::sync::Mutex;

use super::gate;
use super::{Call, PgConnection, PgLab, RowLockHolder, RowLocks};
use crate::{LabError, Record, State, Store};
use refusal::{refusal, settled};
pub use session::SqlSession;

/// The learner's `contract.sql`, or the reference's with `--features
/// solutions`, as the program that runs the lab handed it over.
fn contract() -> &'static str {
    crate::implementation().postgres.contract
}

/// The role that owns the tables and the functions.
pub const OWNER: &str = "fencing_owner";
/// The role that may install a generation.
pub const AUTHORITY: &str = "fencing_authority";
/// The role that may apply a request.
pub const WORKER: &str = "fencing_worker";

/// What the harness made in a lab's schema, by name, which the learner's
/// file must leave as it is: the relations (tables and their keys), the
/// enabled triggers (the checkpoints' writes) and the row security (the
/// checkpoints' reads: each table's switches and its policies, as written).
#[derive(Debug)]
struct Made {
    relations: Vec<String>,
    triggers: Vec<String>,
    row_security: Vec<String>,
}

impl Made {
    /// What `schema` holds now.
    fn read(client: &mut postgres::Client, schema: &str) -> Result<Made, postgres::Error> {
        let names = |client: &mut postgres::Client, sql: &str| {
            client
                .query(sql, &[&schema])
                .map(|rows| rows.iter().map(|row| row.get(0)).collect::<Vec<String>>())
        };
        Ok(Made {
            relations: names(
                client,
                "SELECT c.relname::text FROM pg_catalog.pg_class c
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 ORDER BY 1",
            )?,
            triggers: names(
                client,
                "SELECT t.tgname::text FROM pg_catalog.pg_trigger t
                 JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND NOT t.tgisinternal AND t.tgenabled = 'O'
                 ORDER BY 1",
            )?,
            row_security: names(
                client,
                "SELECT c.relname || ' rls ' || c.relrowsecurity::text || ' forced ' || c.relforcerowsecurity::text
                 FROM pg_catalog.pg_class c
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relkind = 'r'
                 UNION ALL
                 SELECT c.relname || ' policy ' || p.polname || ' ' || p.polcmd::text || ' '
                        || p.polpermissive::text || ' ' || p.polroles::text || ' '
                        || coalesce(pg_catalog.pg_get_expr(p.polqual, p.polrelid), '-') || ' '
                        || coalesce(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), '-')
                 FROM pg_catalog.pg_policy p
                 JOIN pg_catalog.pg_class c ON c.oid = p.polrelid
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1
                 ORDER BY 1",
            )?,
        })
    }
}

/// One lab of the SQL track: a [`PgLab`] whose tables belong to [`OWNER`],
/// with the learner's functions loaded by the owner.
#[derive(Clone)]
pub struct SqlLab {
    lab: PgLab,
}

impl SqlLab {
    /// A fresh lab on the process's server with the contract loaded.
    ///
    /// Errors: [`LabError::ContractRejected`] with what went wrong when the
    /// learner's file does not load, or loads but leaves the schema other
    /// than the harness made it; [`LabError::ServerUnavailable`] without a
    /// server.
    pub fn new() -> Result<SqlLab, LabError> {
        let lab = PgLab::new()?;
        make_roles(&lab)?;
        let schema = lab.schema().to_owned();
        let helpers = refusal::helpers();
        let reads = gate::reads(&schema);
        lab.setup(&format!(
            "BEGIN;
             {helpers}
             {reads}
             ALTER TABLE resources OWNER TO {OWNER};
             ALTER TABLE requests OWNER TO {OWNER};
             GRANT USAGE, CREATE ON SCHEMA {schema} TO {OWNER};
             GRANT USAGE ON SCHEMA {schema} TO {AUTHORITY}, {WORKER};
             COMMIT;"
        ))?;
        // The learner's file, as the owner. `pg_temp` last: a function made
        // `SET search_path FROM CURRENT` never finds a caller's temporary
        // table before the lab's.
        let mut owner = lab.connect_as(Some(OWNER))?;
        // The harness's setup, not the contention under test: catalog locks
        // other labs' setup holds are waited for.
        owner.client().batch_execute(&format!(
            "SET lock_timeout = '10s'; SET search_path = {schema}, pg_temp"
        ))?;
        let made = lab.observe(|client| Ok(Made::read(client, &schema)?))?;
        {
            // One file loads at a time in this process: a file may write a
            // row the whole server shares (`ALTER DEFAULT PRIVILEGES`), and
            // two labs writing it at once fail with "tuple concurrently
            // updated", a harness race, not the learner's mistake.
            static LOADING: Mutex<()> = Mutex::new(());
            let _one = LOADING
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            owner
                .client()
                .batch_execute(contract())
                .map_err(|error| not_loaded(&error))?;
        }
        drop(owner);
        lab.setup(&format!("REVOKE CREATE ON SCHEMA {schema} FROM {OWNER}"))?;
        check_catalogue(&lab, &made)?;
        Ok(SqlLab { lab })
    }

    /// The lab underneath, for what the PostgreSQL track already offers.
    pub fn pg(&self) -> &PgLab {
        &self.lab
    }

    /// A session logged in as `role` ([`OWNER`], [`AUTHORITY`] or
    /// [`WORKER`]), for a statement of one's own (lesson L8's tests).
    pub fn session_as(&self, role: &str) -> Result<PgConnection, LabError> {
        self.lab.connect_as(Some(role))
    }
}

/// What a role may do on its own, outside the two functions: lesson L8's
/// steps. Each runs on a new session logged in as the role, in a
/// transaction of its own.
impl SqlLab {
    /// `role`'s own `UPDATE` of a resource's value.
    pub fn write_value_as(&self, role: &str, resource: &str, value: i64) -> Result<(), LabError> {
        self.update_as(role, "value", resource, value)
    }

    /// `role`'s own `UPDATE` of a resource's generation: a restore.
    pub fn write_generation_as(
        &self,
        role: &str,
        resource: &str,
        generation: i64,
    ) -> Result<(), LabError> {
        self.update_as(role, "generation", resource, generation)
    }

    /// `role` calls `install_generation`.
    pub fn install_as(&self, role: &str, resource: &str, generation: i64) -> Result<(), LabError> {
        let mut session = self.session_as(role)?;
        let result = session::call_install_generation(&mut session, resource, generation);
        settled(&mut session, result)
    }

    /// The owner lifts the schema's rules (`DISABLE TRIGGER USER`, which
    /// the table's owner may do), writes `generation` and `value` back, and
    /// puts the rules back, in one transaction: what no rule of the schema
    /// can stop.
    pub fn owner_writes_around_the_rules(
        &self,
        resource: &str,
        generation: i64,
        value: i64,
    ) -> Result<(), LabError> {
        let mut owner = self.session_as(OWNER)?;
        let mut tx = owner.client().transaction()?;
        tx.batch_execute("ALTER TABLE resources DISABLE TRIGGER USER")?;
        let written = tx.execute(
            "UPDATE resources SET generation = $1, value = $2 WHERE name = $3",
            &[&generation, &value, &resource],
        )?;
        tx.batch_execute("ALTER TABLE resources ENABLE TRIGGER USER")?;
        if written == 0 {
            return Err(LabError::UnknownResource(resource.to_owned()));
        }
        Ok(tx.commit()?)
    }

    fn update_as(
        &self,
        role: &str,
        column: &str,
        resource: &str,
        new: i64,
    ) -> Result<(), LabError> {
        let mut session = self.session_as(role)?;
        let written = session
            .client()
            .execute(
                &format!("UPDATE resources SET {column} = $1 WHERE name = $2"),
                &[&new, &resource],
            )
            // A rule of the schema refuses with the functions' refusals.
            .map_err(|error| refusal(error, "a rule of the schema", resource, "", 0));
        match settled(&mut session, written)? {
            0 => Err(LabError::UnknownResource(resource.to_owned())),
            _ => Ok(()),
        }
    }
}

/// The three roles, once per server (a shared server keeps them between
/// runs). `NOLOGIN` is not an option: each logs in with trust, on the
/// lab's private server.
fn make_roles(lab: &PgLab) -> Result<(), LabError> {
    static MADE: Mutex<bool> = Mutex::new(false);
    let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if *made {
        return Ok(());
    }
    let mut sql = String::new();
    for role in [OWNER, AUTHORITY, WORKER] {
        sql.push_str(&format!(
            "DO $$ BEGIN CREATE ROLE {role} LOGIN;
             EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;"
        ));
    }
    lab.setup(&sql)?;
    *made = true;
    Ok(())
}

/// The learner's file did not run to its end: the server's words, and
/// where in the file, by line and column.
fn not_loaded(error: &postgres::Error) -> LabError {
    let what = error.as_db_error().map_or_else(
        || error.to_string(),
        |db| match db.position() {
            Some(postgres::error::ErrorPosition::Original(at)) => {
                // A 1-based character offset into the file.
                let before: String = contract()
                    .chars()
                    .take((*at as usize).saturating_sub(1))
                    .collect();
                let line = before.matches('\n').count() + 1;
                let column = before.chars().rev().take_while(|c| *c != '\n').count() + 1;
                format!("{} (line {line}, column {column})", db.message())
            }
            _ => db.message().to_owned(),
        },
    );
    LabError::ContractRejected(format!("running it as {OWNER} failed: {what}"))
}

/// Whether the learner's file left the harness's schema as it was `made`.
fn check_catalogue(lab: &PgLab, made: &Made) -> Result<(), LabError> {
    let schema = lab.schema().to_owned();
    let broken = lab.observe(|client| {
        let now = Made::read(client, &schema)?;
        if now.relations != made.relations {
            return Ok(Some(format!(
                "the schema holds {:?}, not the lab's tables {:?}: \
                 the file may create functions and triggers, nothing else",
                now.relations, made.relations
            )));
        }
        if let Some(trigger) = made
            .triggers
            .iter()
            .find(|trigger| !now.triggers.contains(trigger))
        {
            return Ok(Some(format!(
                "the checkpoints' trigger {trigger} was dropped or disabled"
            )));
        }
        if now.row_security != made.row_security {
            return Ok(Some(
                "the file changed the tables' row security (a policy, or its switches): \
                 the checkpoints' reads go through it"
                    .to_owned(),
            ));
        }
        let rules: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_catalog.pg_rewrite r
                 JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1",
                &[&schema],
            )?
            .get(0);
        if rules != 0 {
            return Ok(Some("the file made a rule on the lab's tables".to_owned()));
        }
        for function in ["apply", "install_generation"] {
            let found: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_catalog.pg_proc p
                     JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname = $1 AND p.proname = $2",
                    &[&schema, &function],
                )?
                .get(0);
            if found != 1 {
                return Ok(Some(format!(
                    "the file must make exactly one function {function}, made {found}"
                )));
            }
        }
        Ok(None)
    })?;
    match broken {
        Some(what) => Err(LabError::ContractRejected(what)),
        None => Ok(()),
    }
}

/// What the tests ask of any lab, as [`PgLab`] answers it.
impl SqlLab {
    /// A new connection for a worker or the authority (see [`SqlSession`]).
    pub fn connect(&self) -> Result<SqlSession, LabError> {
        Ok(SqlSession::new(self.clone()))
    }

    /// A resource's generation and value, read by the lab's observer.
    pub fn state(&self, resource: &str) -> Result<State, LabError> {
        self.lab.state(resource)
    }

    /// Every recorded request of a resource, ordered by request id.
    pub fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        self.lab.records(resource)
    }

    /// The names of all resources.
    pub fn resource_names(&self) -> Result<Vec<String>, LabError> {
        self.lab.resource_names()
    }
}

/// The row-lock claims run here as on the PostgreSQL track: the harness's
/// row probes and holders are the lab's, a call's session is its role's.
impl RowLocks for SqlLab {
    fn probe_row_lock(&self, resource: &str) -> Result<(), LabError> {
        self.lab.probe_row_lock(resource)
    }

    fn hold_row_lock(&self, resource: &str) -> Result<RowLockHolder, LabError> {
        self.lab.hold_row_lock(resource)
    }

    fn backend_pid(session: &mut SqlSession, call: Call) -> Result<i32, LabError> {
        session.backend_pid(call)
    }

    fn transaction_of(&self, pid: i32) -> Result<Option<String>, LabError> {
        self.lab.transaction_of(pid)
    }
}

impl Store for SqlLab {
    type Session = SqlSession;

    fn connect(&self) -> Result<SqlSession, LabError> {
        SqlLab::connect(self)
    }

    fn state(&self, resource: &str) -> Result<State, LabError> {
        SqlLab::state(self, resource)
    }

    fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        SqlLab::records(self, resource)
    }

    fn resource_names(&self) -> Result<Vec<String>, LabError> {
        SqlLab::resource_names(self)
    }

    fn direct_sql_write(&self, resource: &str, value: i64) -> Result<(), LabError> {
        crate::counterexample::direct_sql_write(&mut self.connect()?, resource, value)
    }

    fn restore_generation(&self, resource: &str, generation: i64) -> Result<(), LabError> {
        crate::counterexample::restore_generation(&mut self.connect()?, resource, generation)
    }

    fn restart(&self) -> Result<(), LabError> {
        self.lab.restart()
    }

    fn trace(&self) -> Option<crate::checkpoint::Trace> {
        Some(self.lab.trace().clone())
    }
}
