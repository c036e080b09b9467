//! Alternative: before calling apply, asks the cluster how long its lease
//! has left, and stops with the error it gets if the lease is gone. Frozen
//! after its install, it wakes to a revoked lease and stops: apply is never
//! called, which is a stop whatever the error says.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    // A check of its own; the destination still judges the token.
    worker.lease_ttl()?;
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
