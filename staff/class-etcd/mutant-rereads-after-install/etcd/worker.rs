//! Mutant: installs its token, then presents the generation it reads at the
//! destination, not the token. Frozen between the two, it wakes to read the
//! newer holder's generation and acts with it.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, acting with what it reads.
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
    let generation = worker.installed_generation(&job.resource)?;
    worker.apply(&job.resource, generation, &job.request_id, job.delta)
}
