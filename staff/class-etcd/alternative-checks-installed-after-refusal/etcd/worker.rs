//! Alternative: when install_generation refuses, reads what is installed
//! and decides from that, instead of matching on the refusal.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    let token = held.revision;
    if let Err(refusal) = worker.install_generation(&job.resource, token) {
        let installed = worker.installed_generation(&job.resource)?;
        if installed > token {
            return Err(LabError::Superseded { token, installed });
        }
        if installed != token {
            return Err(refusal);
        }
    }
    let outcome = worker.apply(&job.resource, token, &job.request_id, job.delta)?;
    Ok(outcome)
}
