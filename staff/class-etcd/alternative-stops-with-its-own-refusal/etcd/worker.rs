//! Alternative: after installing, reads the generation back and stops with a
//! refusal of its own (NotHigher) if a newer holder installed since.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    let installed = match worker.install_generation(&job.resource, token) {
        Ok(()) => worker.installed_generation(&job.resource)?,
        Err(LabError::NotHigher { installed, .. }) => installed,
        Err(error) => return Err(error),
    };
    if installed != token {
        return Err(LabError::NotHigher { requested: token, installed });
    }
    // The destination still judges the token itself, inside apply.
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
