//! Alternative: reads the clock. It asks how long its lease has left once
//! it holds the lock, and before calling apply stops by itself if that much
//! time has passed since: its lease is surely gone. Otherwise it acts as the
//! reference does, and the destination still judges the token. Reading the
//! clock is honest code in a lesson about leases.

use std::time::{Duration, Instant};

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    let token = worker.lock(&job.resource)?.revision;
    let ttl = worker.lease_ttl()?;
    let surely_gone = Instant::now() + Duration::from_secs(ttl.max(0) as u64);
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        Err(LabError::NotHigher { installed, .. }) => {
            return Err(LabError::Superseded { token, installed });
        }
        Err(error) => return Err(error),
    }
    if Instant::now() >= surely_gone {
        return Err(LabError::CoordinatorUnavailable(
            "this worker's lease has surely run out".to_owned(),
        ));
    }
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
