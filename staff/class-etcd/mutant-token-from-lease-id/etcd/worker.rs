//! Mutant: the fencing token is the worker's lease id. Lease ids follow the
//! order leases were granted in, not the order the lock was taken in.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, fencing with the lease id.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    let token = held.lease;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) if installed == token => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
