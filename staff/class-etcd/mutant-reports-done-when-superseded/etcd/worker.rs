//! Mutant: a worker that stops, as it should, when its install finds a
//! newer generation, but tells its caller the job was done (L7.1, L7.4).

use crate::etcd::{Job, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`: take the lock, make sure the
/// destination fences with this holder's token, then apply the request.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    // L7:
    let held = worker.lock(&job.resource)?;
    // The lock key's revision: the cluster's counter of changes, so a
    // later holder's key always has a higher one. The lease id is not (it
    // follows the order leases were granted in, on whichever member granted
    // them), nor is anything counted in this process.
    let token = held.revision;
    match worker.install_generation(&job.resource, token) {
        Ok(()) => {}
        // A newer holder was here while this worker was away: stop. (Each
        // job takes a lock key of its own, so no other holder ever had
        // this token: an installed generation that is not lower is newer.)
        // The mistake: nothing was applied, yet the answer says done.
        Err(LabError::NotHigher { installed, .. }) => {
            return Ok(Outcome::Applied { result: installed });
        }
        Err(error) => return Err(error),
    }
    // The destination judges the token itself, inside its transaction: if
    // the lock passed on after the install, apply refuses it as stale.
    worker.apply(&job.resource, token, &job.request_id, job.delta)
}
