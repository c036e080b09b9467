//! Alternative: after installing, checks its lease, then reads the
//! generation back and stops (Superseded) unless it is still its own token;
//! it presents the token, never what it read. Frozen between the lease
//! check and the read, it wakes to read the newer holder's generation and
//! stops.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    if let Err(error) = worker.install_generation(&job.resource, token) {
        return Err(match error {
            LabError::NotHigher { installed, .. } => LabError::Superseded { token, installed },
            other => other,
        });
    }
    worker.lease_ttl()?;
    let installed = worker.installed_generation(&job.resource)?;
    if installed != token {
        return Err(LabError::Superseded { token, installed });
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
