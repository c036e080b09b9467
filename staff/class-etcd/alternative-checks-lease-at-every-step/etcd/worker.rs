//! Alternative: checks that its lease is alive after taking the lock, after
//! installing its token and before acting, and stops with the lease's error
//! at the first check that fails. It presents the token it installed, so a
//! freeze after any of the checks is still caught by the destination.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let held = worker.lock(&job.resource)?;
    worker.lease_ttl()?;
    let installed = worker.install_generation(&job.resource, held.revision);
    worker.lease_ttl()?;
    if let Err(error) = installed {
        return Err(match error {
            LabError::NotHigher { installed, .. } => LabError::Superseded {
                token: held.revision,
                installed,
            },
            other => other,
        });
    }
    worker.lease_ttl()?;
    worker.apply(&job.resource, held.revision, &job.request_id, job.delta)
}
