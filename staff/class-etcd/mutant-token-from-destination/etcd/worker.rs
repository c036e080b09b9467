//! Mutant: the worker makes its token up at the destination, one above the
//! generation installed there, instead of taking it from the lock. A holder
//! frozen before it reads takes the generation after the newer holder's.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, fencing with installed + 1.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    worker.lock(&job.resource)?;
    let token = worker.installed_generation(&job.resource)? + 1;
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
