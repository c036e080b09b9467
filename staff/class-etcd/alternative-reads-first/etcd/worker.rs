//! Alternative: reads the installed generation first, and stops before
//! installing when a newer holder has been there.

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    let installed = worker.installed_generation(&job.resource)?;
    if installed > token {
        return Err(LabError::Superseded { token, installed });
    }
    if installed < token {
        // A newer holder may still install between the read and this call:
        // install_generation decides, inside its own transaction.
        if let Err(error) = worker.install_generation(&job.resource, token) {
            return Err(match error {
                LabError::NotHigher { installed, .. } => LabError::Superseded { token, installed },
                other => other,
            });
        }
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
