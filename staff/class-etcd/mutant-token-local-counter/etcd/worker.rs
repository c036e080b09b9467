//! Mutant: the fencing token is a counter kept in the worker's process. It
//! starts at 1 again in every process, so every holder presents the same.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

static NEXT_TOKEN: AtomicI64 = AtomicI64::new(1);

/// Does `job` under the lock of `job.resource`, fencing with a local count.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    worker.lock(&job.resource)?;
    let token = NEXT_TOKEN.fetch_add(1, Ordering::SeqCst);
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
