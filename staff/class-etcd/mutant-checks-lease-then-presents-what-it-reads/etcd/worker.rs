//! Mutant: installs its token, checks that its lease is alive, then reads
//! the installed generation and presents that, not the token. Frozen after
//! the install it wakes to a dead lease and stops; but frozen between the
//! lease check and the read, it wakes to read the newer holder's generation
//! and acts with it, a write the destination cannot tell from the new
//! holder's. The graded suite must fail it (L7.1, frozen at the generation
//! read).

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`, acting with what it reads.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    worker.lease_ttl()?;
    let generation = worker.installed_generation(&job.resource)?;
    worker.apply(&job.resource, generation, &job.request_id, job.delta)
}
