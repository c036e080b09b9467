//! Mutant: when a newer generation is installed already, the worker borrows
//! it and applies with the newer holder's generation.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, adopting a newer generation.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    let mut token = held.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) => token = installed,
        Err(error) => return Err(error),
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
