//! Mutant: holding the lock is taken as proof. Nothing is installed; the
//! worker presents the generation it reads at the destination.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, trusting the lock.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    worker.lock(&job.resource)?;
    let generation = worker.installed_generation(&job.resource)?;
    worker.apply(&job.resource, generation, &job.request_id, job.delta)
}
