//! What the workers send and what they were answered: the two workers, the
//! route their requests take, and each call's outcome. Plain data below both
//! the actors that make the calls ([`super::actors`]) and the invariants that
//! judge them ([`super::invariants`]).

use std::fmt;

use super::RESOURCE;
use super::commits::Committed;
use crate::{LabConnection, LabError, Outcome, Session, counterexample};

/// The two workers: a name, a request id and a delta each. The deltas differ
/// by an order of magnitude so a value says who was applied.
pub(super) const WORKERS: [Worker; 2] = [
    Worker {
        name: "worker 1",
        request_id: "r1",
        delta: 1,
    },
    Worker {
        name: "worker 2",
        request_id: "r2",
        delta: 10,
    },
];

/// One worker's fixed part.
pub(super) struct Worker {
    /// How the schedule names it.
    pub(super) name: &'static str,
    /// The request id of its one request.
    pub(super) request_id: &'static str,
    /// The change it asks for.
    pub(super) delta: i64,
}

/// Which path the workers' requests take to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// [`Session::apply`]: the destination checks the generation in the
    /// transaction that writes.
    Apply,
    /// [`counterexample::unfenced_write`]: the worker checks, then writes a
    /// delta that carries no generation and no request id.
    WorkerSideCheck,
}

impl Route {
    /// Sends `worker`'s request with `generation` along this route.
    pub(super) fn call(
        self,
        db: &mut LabConnection,
        generation: i64,
        worker: &Worker,
    ) -> Result<Outcome, LabError> {
        match self {
            Route::Apply => db.apply(RESOURCE, generation, worker.request_id, worker.delta),
            Route::WorkerSideCheck => {
                counterexample::unfenced_write(db, RESOURCE, generation, worker.delta)
                    .map(|result| Outcome::Applied { result })
            }
        }
    }

    /// The request as a schedule step shows it.
    pub(super) fn describe(self, generation: i64, worker: &Worker) -> String {
        match self {
            Route::Apply => format!(
                "apply({RESOURCE}, generation {generation}, {:?}, {:+})",
                worker.request_id, worker.delta
            ),
            Route::WorkerSideCheck => format!(
                "checks generation {generation}, then writes {:+} with no generation",
                worker.delta
            ),
        }
    }

    /// Whether the destination keeps a record per request on this route.
    pub(super) fn keeps_records(self) -> bool {
        self == Route::Apply
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Route::Apply => "apply",
            Route::WorkerSideCheck => "worker-side check",
        })
    }
}

/// One worker's call and what came of it.
pub(super) struct Call {
    /// Index into [`WORKERS`].
    pub(super) worker: usize,
    /// Whether this was the retry at the end.
    pub(super) retry: bool,
    /// The generation presented.
    pub(super) generation: i64,
    /// The destination's answer.
    pub(super) result: Result<Outcome, LabError>,
    /// The installed generation when the call returned: what a refusal as
    /// stale must name.
    pub(super) installed: i64,
    /// The last commit of the call that changed a resource, as the
    /// database reported it: an effect is judged by the generation
    /// installed then, not when the call returned.
    pub(super) committed: Option<Committed>,
    /// Its place on the exploration's clock when it returned.
    pub(super) returned: u64,
}

impl Call {
    /// The generation installed when the call's effect committed; the one
    /// installed when it returned if the database reported no effect.
    pub(super) fn installed_at_commit(&self) -> i64 {
        self.committed.map_or(self.installed, |c| c.installed)
    }

    /// When the call took effect: its effect's commit, or its return if it
    /// had none (a replay, a refusal).
    pub(super) fn took_effect(&self) -> u64 {
        self.committed.map_or(self.returned, |c| c.order)
    }
}
