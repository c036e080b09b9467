//! The etcd track (feature `etcd`): the authority is a real coordinator.
//!
//! In the SQLite lab the authority is a function a trusted caller runs, and
//! a pause is a checkpoint inside one process. Here each worker is a process
//! of its own. It starts a session with a three-member etcd cluster (a lease
//! it keeps alive), takes the resource's lock under that lease, installs a
//! fencing token at the destination and applies its request there, through
//! the SQLite lab's own `install_generation` and `apply`. The tests freeze a
//! worker with SIGSTOP while its lease is revoked (standing for a lease
//! that runs out), let another worker take the lock, kill the cluster's
//! leader, and wake the first worker with SIGCONT.
//!
//! What the learner writes is `work`, in `exercises/etcd/worker.rs`: which
//! number is the token, when to install it, when to stop, what to present
//! to `apply`.
//!
//! # Layout
//!
//! - [`cluster`]: a private cluster, watched through its members' logs, that
//!   outlives no test process.
//! - [`client`]: leases, locks and watches, blocking.
//! - [`worker`]: the tools a worker's `work` has ([`Worker`]), its job, the
//!   lock it holds, and the moments a test may stop it at.
//! - [`process`]: workers as processes, driven by their parent.
//!
//! The transcript's chapter is told by `crate::story`, from the scenes of
//! `crate::scenes::l7`, which use this module: the arrows run one way.

pub mod client;
pub mod cluster;
pub mod process;
pub mod worker;

pub use client::{Coordinator, Holder};
pub use cluster::Cluster;
pub use process::{Missed, Report, Spec, WorkerProcess, serve_if_worker};
pub use worker::{Held, Job, Moment, Worker};

use crate::panics::guard;
use crate::{LabError, Outcome, claims};

/// Whose `work` a worker process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The learner's (`exercises/etcd/worker.rs`).
    Yours,
    /// The counterexample: trusts "I hold the lock" ([`trust_the_lock`]).
    TrustsTheLock,
}

impl Role {
    /// The word the process protocol uses.
    pub fn word(self) -> &'static str {
        match self {
            Role::Yours => "yours",
            Role::TrustsTheLock => "trusts-the-lock",
        }
    }

    /// The role a word names.
    pub fn from_word(word: &str) -> Option<Role> {
        [Role::Yours, Role::TrustsTheLock]
            .into_iter()
            .find(|role| role.word() == word)
    }
}

/// A worker does `job`: takes the lock, fences, acts (the learner's
/// `exercises/etcd/worker.rs`).
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    guard("work", claims::ETCD_WORKER, || {
        (crate::implementation().etcd_work)(&mut fencing_lab_api::etcd::Worker::new(worker), job)
    })
}

/// The counterexample: a worker that takes the lock and then trusts it. It
/// installs nothing and presents whatever generation it reads at the
/// destination, so the destination cannot tell it from the next holder.
pub fn trust_the_lock(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    worker.lock(&job.resource)?;
    let generation = worker.installed_generation(&job.resource)?;
    worker.apply(&job.resource, generation, &job.request_id, job.delta)
}
