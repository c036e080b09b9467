//! The etcd track's worker, as the learner's `work` holds it: the tools a
//! worker process has (its lease, the lock service, the destination), and
//! nothing of the process, the cluster or the test that drives them.

use crate::{LabError, Outcome};

/// One job for a worker: apply `delta` to `resource` as request
/// `request_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The resource to change (`fund-A`), and the name of its lock.
    pub resource: String,
    /// The request's id: the same on every attempt of the same job.
    pub request_id: String,
    /// What to add to the value.
    pub delta: i64,
}

/// The lock, held: what etcd answered when it granted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The lock key: `<lock name>/<lease in hex>`. It exists for as long as
    /// this worker holds the lock.
    pub key: String,
    /// The lease the key is attached to: when it is revoked or runs out,
    /// the key is deleted and the lock passes to the next in line.
    pub lease: i64,
    /// The cluster revision that created the key. etcd counts every change
    /// with one revision for the whole cluster, replicated by a majority
    /// before the lock is granted; a later holder's key is created later,
    /// so its revision is higher, whichever member answers or leads.
    pub revision: i64,
}

/// What a worker process can do; the harness's worker implements it, and
/// [`Worker`] is the face the learner's code gets.
pub trait Tools {
    /// This worker's lease, granted when its process started.
    fn lease(&self) -> i64;
    /// How many seconds the lease has left, as the cluster says now.
    fn lease_ttl(&mut self) -> Result<i64, LabError>;
    /// Takes the lock of `resource` under this worker's lease.
    fn lock(&mut self, resource: &str) -> Result<Held, LabError>;
    /// The SQLite lab's `install_generation` on the destination.
    fn install_generation(&mut self, resource: &str, generation: i64) -> Result<(), LabError>;
    /// Reads the generation installed at the destination now.
    fn installed_generation(&mut self, resource: &str) -> Result<i64, LabError>;
    /// The SQLite lab's `apply` on the destination.
    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError>;
}

/// A worker's tools, for one run of `work`. A test may freeze the worker's
/// process at any of these calls, let its lease go and give the lock to
/// another worker, then wake it.
pub struct Worker<'a> {
    /// The harness's worker.
    tools: &'a mut dyn Tools,
}

impl<'a> Worker<'a> {
    /// The harness makes one for each run of `work`.
    pub fn new(tools: &'a mut dyn Tools) -> Worker<'a> {
        Worker { tools }
    }

    /// This worker's lease, granted when its process started.
    pub fn lease(&self) -> i64 {
        self.tools.lease()
    }

    /// How many seconds this worker's lease has left, as the cluster says
    /// now. A lease that was revoked or ran out is an error
    /// ([`LabError::CoordinatorUnavailable`]). The answer is old as soon as
    /// it arrives: a worker frozen right after it still believes it.
    pub fn lease_ttl(&mut self) -> Result<i64, LabError> {
        self.tools.lease_ttl()
    }

    /// Takes the lock of `resource` under this worker's lease, waiting while
    /// another worker holds it.
    pub fn lock(&mut self, resource: &str) -> Result<Held, LabError> {
        self.tools.lock(resource)
    }

    /// The authority's step, done by the lock's holder: the SQLite lab's
    /// `install_generation` on the destination.
    pub fn install_generation(&mut self, resource: &str, generation: i64) -> Result<(), LabError> {
        self.tools.install_generation(resource, generation)
    }

    /// Reads the generation installed at the destination now. (A test may
    /// freeze the worker as it calls this, before the read: what it reads
    /// is what is installed when it wakes.)
    pub fn installed_generation(&mut self, resource: &str) -> Result<i64, LabError> {
        self.tools.installed_generation(resource)
    }

    /// Sends the request to the destination: the SQLite lab's `apply`.
    pub fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        self.tools.apply(resource, generation, request_id, delta)
    }
}
