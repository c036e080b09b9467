//! Mutant: the request id is made from the job's id and the token, so each
//! attempt of the same job is a new request.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, with an id per attempt.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    let token = held.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) if installed == token => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    let request_id = format!("{}-{token}", job.request_id);
    worker.apply(&job.resource, token, &request_id, job.delta)
}
