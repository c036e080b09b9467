//! What a worker process has: a session with the cluster (a lease kept
//! alive), the lock service, and a connection to the destination. The
//! learner's `work` (`exercises/etcd/worker.rs`) decides what to do with
//! them; this type only does what it is asked, and stops where a test asked
//! it to ([`Moment`]).

use std::fmt;

use crate::etcd::client::Coordinator;
pub use fencing_lab_api::etcd::{Held, Job};

use crate::{LabConnection, LabError, Outcome, Session};

/// Where a test may stop a worker process, to freeze it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Moment {
    /// The process has its lease; `work` has not started.
    Started,
    /// `lock` has returned: the worker holds the lock.
    Locked,
    /// `install_generation` has returned, whatever it answered.
    Installed,
    /// `installed_generation` was called: it reads once the worker goes
    /// on, so a worker frozen here reads what is installed when it wakes.
    Reading,
    /// `apply` was called: every decision is made, nothing is sent yet.
    Acting,
    /// `work` has returned; its result is not reported yet.
    Returned,
}

impl Moment {
    /// Every moment, in the order a worker reaches them.
    pub const ALL: [Moment; 6] = [
        Moment::Started,
        Moment::Locked,
        Moment::Installed,
        Moment::Reading,
        Moment::Acting,
        Moment::Returned,
    ];

    /// The word the process protocol uses.
    pub fn word(self) -> &'static str {
        match self {
            Moment::Started => "started",
            Moment::Locked => "locked",
            Moment::Installed => "installed",
            Moment::Reading => "reading",
            Moment::Acting => "acting",
            Moment::Returned => "returned",
        }
    }
}

impl fmt::Display for Moment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Moment::Started => "before taking the lock",
            Moment::Locked => "holding the lock, before anything else",
            Moment::Installed => "just after install_generation returned",
            Moment::Reading => "about to read the installed generation",
            Moment::Acting => "about to call apply",
            Moment::Returned => "after the job, before reporting its result",
        })
    }
}

/// A test's hook at a [`Moment`], with what the worker holds there (the
/// lock key's revision at [`Moment::Locked`]).
pub(crate) type Pause = Box<dyn FnMut(Moment, String)>;

/// A worker's tools (see the module's documentation).
pub struct Worker {
    coordinator: Coordinator,
    db: LabConnection,
    lease: i64,
    pause: Option<Pause>,
    applies: u32,
}

impl Worker {
    /// A worker with a session (`lease`, already kept alive) on
    /// `coordinator` and a connection to the destination.
    pub(crate) fn new(coordinator: Coordinator, db: LabConnection, lease: i64) -> Worker {
        Worker {
            coordinator,
            db,
            lease,
            pause: None,
            applies: 0,
        }
    }

    /// Stops at each moment in `pause`'s hands.
    pub(crate) fn on_moment(&mut self, pause: Pause) {
        self.pause = Some(pause);
    }

    pub(crate) fn reach(&mut self, moment: Moment, detail: String) {
        if let Some(pause) = self.pause.as_mut() {
            pause(moment, detail);
        }
    }

    /// How many times `apply` was called.
    pub(crate) fn applies(&self) -> u32 {
        self.applies
    }

    /// This worker's lease, granted when its process started.
    pub fn lease(&self) -> i64 {
        self.lease
    }

    /// How many seconds this worker's lease has left, as the cluster says
    /// now. A lease that was revoked or ran out is an error
    /// ([`LabError::CoordinatorUnavailable`]). The answer is old as soon as
    /// it arrives: a worker frozen right after it still believes it.
    pub fn lease_ttl(&mut self) -> Result<i64, LabError> {
        match self.coordinator.time_to_live(self.lease)? {
            ttl if ttl > 0 => Ok(ttl),
            _ => Err(LabError::CoordinatorUnavailable(format!(
                "lease {:x} not found: revoked or run out",
                self.lease
            ))),
        }
    }

    /// Takes the lock of `resource` under this worker's lease, waiting while
    /// another worker holds it.
    pub fn lock(&mut self, resource: &str) -> Result<Held, LabError> {
        let (key, revision) = self.coordinator.lock(resource, self.lease)?;
        self.reach(Moment::Locked, revision.to_string());
        Ok(Held {
            key,
            lease: self.lease,
            revision,
        })
    }

    /// The authority's step, done by the lock's holder: the SQLite lab's
    /// `install_generation` on the destination.
    pub fn install_generation(&mut self, resource: &str, generation: i64) -> Result<(), LabError> {
        let installed = self.db.install_generation(resource, generation);
        self.reach(Moment::Installed, String::new());
        installed
    }

    /// Reads the generation installed at the destination now. (A test may
    /// freeze the worker as it calls this, before the read: what it reads
    /// is what is installed when it wakes.)
    pub fn installed_generation(&mut self, resource: &str) -> Result<i64, LabError> {
        self.reach(Moment::Reading, String::new());
        let tx = self.db.begin(rusqlite::TransactionBehavior::Deferred)?;
        let generation = tx.installed_generation(resource)?;
        tx.commit()?;
        Ok(generation)
    }

    /// Sends the request to the destination: the SQLite lab's `apply`.
    pub fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        self.applies += 1;
        self.reach(Moment::Acting, String::new());
        self.db.apply(resource, generation, request_id, delta)
    }

    /// Gives the lease back: the lock passes on at once. The harness calls
    /// it when the job is done; a worker that dies first leaves its lease to
    /// run out.
    pub(crate) fn close(&mut self) -> Result<(), LabError> {
        self.coordinator.revoke(self.lease)
    }
}

/// What the learner's `work` gets, through the API's `Worker`: the
/// inherent methods above.
impl fencing_lab_api::etcd::Tools for Worker {
    fn lease(&self) -> i64 {
        Worker::lease(self)
    }

    fn lease_ttl(&mut self) -> Result<i64, LabError> {
        Worker::lease_ttl(self)
    }

    fn lock(&mut self, resource: &str) -> Result<Held, LabError> {
        Worker::lock(self, resource)
    }

    fn install_generation(&mut self, resource: &str, generation: i64) -> Result<(), LabError> {
        Worker::install_generation(self, resource, generation)
    }

    fn installed_generation(&mut self, resource: &str) -> Result<i64, LabError> {
        Worker::installed_generation(self, resource)
    }

    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        Worker::apply(self, resource, generation, request_id, delta)
    }
}
