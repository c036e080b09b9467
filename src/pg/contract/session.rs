//! [`SqlSession`]: a worker's and the authority's connection to an
//! [`SqlLab`], each call made by the role that may make it, through the
//! PostgreSQL track's gate.

use std::cell::RefCell;
use std::rc::Rc;

use super::refusal::{refusal, settled};
use super::{AUTHORITY, OWNER, SqlLab, WORKER};
use crate::checkpoint::{Checkpoint, Hooks};
use crate::claims::facts::Call as CallFact;
use crate::counterexample::{Direct, Param};
use crate::facts;
use crate::pg::{Call, PgConnection, gate};
use crate::{LabError, Outcome};

/// A hook shared by the sessions of one [`SqlSession`].
type SharedHook = Rc<RefCell<Box<dyn FnMut(Checkpoint) -> Result<(), LabError>>>>;

/// A worker's and the authority's connection to an [`SqlLab`]: one server
/// session per role, each opened on first use (see the module's docs).
pub struct SqlSession {
    lab: SqlLab,
    worker: Option<PgConnection>,
    authority: Option<PgConnection>,
    owner: Option<PgConnection>,
    hook: Option<SharedHook>,
}

impl SqlSession {
    /// A session with no server session open yet.
    pub(super) fn new(lab: SqlLab) -> SqlSession {
        SqlSession {
            lab,
            worker: None,
            authority: None,
            owner: None,
            hook: None,
        }
    }

    /// The session logged in as `role`, opened with this session's hook if
    /// it is not open yet.
    fn as_role(&mut self, role: &'static str) -> Result<&mut PgConnection, LabError> {
        let slot = match role {
            WORKER => &mut self.worker,
            AUTHORITY => &mut self.authority,
            _ => &mut self.owner,
        };
        if slot.is_none() {
            let mut session = self.lab.session_as(role)?;
            // The lab's events call the session by the role it logs in as.
            if let Some((trace, actor)) = session.hooks().tracer() {
                trace.name(actor, role);
            }
            if let Some(hook) = &self.hook {
                let hook = Rc::clone(hook);
                session.on_checkpoint(move |checkpoint| (hook.borrow_mut())(checkpoint));
            }
            *slot = Some(session);
        }
        Ok(slot.as_mut().expect("opened above"))
    }

    /// The backend pid of the server session `call` runs on: the worker's
    /// for `apply`, the authority's for `install_generation`.
    pub fn backend_pid(&mut self, call: Call) -> Result<i32, LabError> {
        let role = match call {
            Call::Apply => WORKER,
            Call::Install => AUTHORITY,
        };
        self.as_role(role)?.backend_pid()
    }

    fn open(&mut self) -> impl Iterator<Item = &mut PgConnection> {
        [&mut self.worker, &mut self.authority, &mut self.owner]
            .into_iter()
            .flatten()
    }
}

impl crate::Session for SqlSession {
    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        let worker = self.as_role(WORKER)?;
        let call = CallFact::Apply {
            resource: resource.to_owned(),
            generation,
            request_id: request_id.to_owned(),
            delta,
        };
        // The call and its answer join the lab's events, as on the Rust
        // tracks; the function's reads and writes reach the checkpoints.
        let result = worker.hooks().call(call, facts::answer, || {
            gate::serve(worker, &[], |db| {
                call_apply(db, resource, generation, request_id, delta)
            })
        });
        settled(worker, result)
    }

    fn install_generation(&mut self, resource: &str, new_generation: i64) -> Result<(), LabError> {
        let authority = self.as_role(AUTHORITY)?;
        let call = CallFact::Install {
            resource: resource.to_owned(),
            generation: new_generation,
        };
        let result = authority.hooks().call(call, facts::install_answer, || {
            gate::serve(authority, &[], |db| {
                call_install_generation(db, resource, new_generation)
            })
        });
        settled(authority, result)
    }

    fn unfenced_write(
        &mut self,
        resource: &str,
        held_generation: i64,
        delta: i64,
    ) -> Result<i64, LabError> {
        // Opened first, so that its hooks are the ones the write runs in.
        self.as_role(OWNER)?;
        crate::counterexample::unfenced_write(self, resource, held_generation, delta)
    }

    fn on_checkpoint(&mut self, hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static) {
        let hook: SharedHook = Rc::new(RefCell::new(Box::new(hook)));
        for session in self.open() {
            let hook = Rc::clone(&hook);
            session.on_checkpoint(move |checkpoint| (hook.borrow_mut())(checkpoint));
        }
        self.hook = Some(hook);
    }

    fn clear_checkpoint(&mut self) {
        self.hook = None;
        for session in self.open() {
            session.clear_checkpoint();
        }
    }

    fn unobserved(&self) -> Option<&'static str> {
        None
    }

    /// The lab's events, through whichever of its role sessions is open
    /// (each is named by its role already).
    fn traced(&self) -> Option<(crate::checkpoint::Trace, usize)> {
        [&self.worker, &self.authority, &self.owner]
            .into_iter()
            .flatten()
            .find_map(|session| session.hooks().tracer())
    }
}

impl SqlSession {
    /// Runs `sql` (a batch) as the worker, on the session its `apply`
    /// calls run on: what it leaves in that session (a temporary relation,
    /// a setting) is in place for the calls that follow (lesson L8's
    /// steps).
    pub fn as_worker(&mut self, sql: &str) -> Result<(), LabError> {
        let worker = self.as_role(WORKER)?;
        let result = worker.client().batch_execute(sql).map_err(LabError::from);
        settled(worker, result)
    }
}

/// What a role may try beyond its part, each on a new session logged in
/// as the role, in a transaction of its own: lesson L8's steps (the rest
/// are in the parent module).
impl SqlLab {
    /// `role` calls `apply`.
    pub fn apply_as(
        &self,
        role: &str,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        let mut session = self.session_as(role)?;
        let result = call_apply(&mut session, resource, generation, request_id, delta);
        settled(&mut session, result)
    }

    /// `role`'s own `INSERT` of a record into `requests`, of a request
    /// that was never applied.
    pub fn insert_record_as(
        &self,
        role: &str,
        resource: &str,
        request_id: &str,
        delta: i64,
        generation: i64,
    ) -> Result<(), LabError> {
        self.write_as(
            role,
            "INSERT INTO requests (resource, request_id, delta, result, generation)
             VALUES ($1, $2, $3, $3, $4)",
            &[&resource, &request_id, &delta, &generation],
        )
    }

    /// `role`'s own `DELETE` of a resource's records.
    pub fn delete_records_as(&self, role: &str, resource: &str) -> Result<(), LabError> {
        self.write_as(
            role,
            "DELETE FROM requests WHERE resource = $1",
            &[&resource],
        )
    }

    fn write_as(
        &self,
        role: &str,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<(), LabError> {
        let mut session = self.session_as(role)?;
        let written = session
            .client()
            .execute(sql, params)
            .map(|_| ())
            // A rule of the schema refuses with the functions' refusals.
            .map_err(|error| refusal(error, "a rule of the schema", "", "", 0));
        settled(&mut session, written)
    }
}

/// One call of the `apply` function on `db`, as whichever role `db` is
/// logged in as, its answer read and its refusal typed.
fn call_apply(
    db: &mut PgConnection,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    let row = db
        .client()
        .query_one(
            "SELECT outcome, value_after FROM apply($1, $2, $3, $4)",
            &[&resource, &generation, &request_id, &delta],
        )
        .map_err(|error| refusal(error, "apply", resource, request_id, delta))?;
    let (outcome, result): (Option<String>, Option<i64>) = (row.get(0), row.get(1));
    match (outcome.as_deref(), result) {
        (Some("applied"), Some(result)) => Ok(Outcome::Applied { result }),
        (Some("replayed"), Some(result)) => Ok(Outcome::Replayed { result }),
        (outcome, result) => Err(LabError::Panicked {
            function: "apply",
            message: format!(
                "returned outcome {outcome:?}, value_after {result:?}: \
                 the outcome is 'applied' or 'replayed', with the value"
            ),
        }),
    }
}

/// One call of the `install_generation` function on `db`, as whichever
/// role `db` is logged in as, its refusal typed.
pub(super) fn call_install_generation(
    db: &mut PgConnection,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    db.client()
        .execute(
            "SELECT install_generation($1, $2)",
            &[&resource, &new_generation],
        )
        .map(|_| ())
        .map_err(|error| refusal(error, "install_generation", resource, "", 0))
}

/// The counterexamples run as the owner: the one role that may still
/// write the tables directly.
impl Direct for SqlSession {
    fn query_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<i64>, LabError> {
        self.as_role(OWNER)?.query_i64(sql, params)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), LabError> {
        self.as_role(OWNER)?.execute(sql, params)
    }

    fn hooks(&self) -> Rc<Hooks> {
        match &self.owner {
            Some(owner) => owner.hooks(),
            // Not open yet: the first statement opens it, with the hook.
            None => Rc::new(Hooks::default()),
        }
    }
}
