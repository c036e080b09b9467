//! Mutant: when a newer generation is installed already, the worker goes on
//! and applies with its own token anyway.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, not stopping when superseded.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    let token = held.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        // A newer holder was here: apply all the same.
        Err(LabError::NotHigher { .. }) => {}
        Err(error) => return Err(error),
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
