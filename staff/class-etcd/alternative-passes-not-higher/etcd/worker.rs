//! Alternative: passes install_generation's refusal on as it is, instead of
//! turning it into Superseded.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    worker.install_generation(&job.resource, held.revision)?;
    worker.apply(&job.resource, held.revision, &job.request_id, job.delta)
}
