//! Mutant: when taking the lock fails, it does not stop: it reads the
//! installed generation and acts with that, holding nothing. The graded
//! suite must fail it (L7.4, the lease revoked before the lock is granted).

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, or without it.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = match worker.lock(&job.resource) {
        Ok(held) => held.revision,
        Err(_) => {
            let installed = worker.installed_generation(&job.resource)?;
            return worker.apply(&job.resource, installed, &job.request_id, job.delta);
        }
    };
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
