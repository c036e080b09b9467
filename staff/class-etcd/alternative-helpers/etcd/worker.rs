//! Alternative: the steps as helper functions, chained with `and_then`.

use crate::etcd::{Held, Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    worker
        .lock(&job.resource)
        .map(|held| token_of(&held))
        .and_then(|token| fence(worker, &job.resource, token))
        .and_then(|token| act(worker, job, token))
}

/// The fencing token: the revision etcd gave the lock key.
fn token_of(held: &Held) -> i64 {
    held.revision
}

/// Installs `token` at the destination; a newer one there means this
/// holder was superseded.
fn fence(worker: &mut Worker, resource: &str, token: i64) -> Result<i64, LabError> {
    match worker.install_generation(resource, token) {
        Err(LabError::NotHigher { installed, .. }) if installed != token => {
            Err(LabError::Superseded { token, installed })
        }
        Err(LabError::NotHigher { .. }) | Ok(()) => Ok(token),
        Err(other) => Err(other),
    }
}

/// Sends the job's request, under `token`.
fn act(worker: &mut Worker, job: &Job, token: i64) -> Result<Outcome, LabError> {
    let Job {
        resource,
        request_id,
        delta,
    } = job;
    worker.apply(resource, token, request_id, *delta)
}
