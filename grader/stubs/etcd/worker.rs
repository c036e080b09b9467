//! etcd track, the one exercise: a worker that takes its authority from a
//! lock service.
//!
//! Do the SQLite exercises first: this worker calls your
//! `install_generation` and `apply`. Run `cargo test --features etcd` to see
//! which claims of L7 still fail.
//!
//! The worker runs in a process of its own. When it starts it has a lease
//! from a three-member etcd cluster, which its process keeps alive; a test
//! may freeze the process (SIGSTOP) at any of your calls, let the lease go,
//! give the lock to another worker, and wake yours again (SIGCONT). Your
//! tools are on `worker` (see `api/src/etcd.rs`): `lock`,
//! `install_generation`, `installed_generation`, `lease_ttl` and `apply`.

use crate::etcd::Job;
#[allow(unused_imports)] // you will need them
use crate::etcd::{Held, Worker};
use crate::{LabError, Outcome};

/// Does `job` under the lock of `job.resource`: take the lock, make sure the
/// destination fences with this holder's token, then apply the request.
///
/// Claims: L7.1 to L7.6.
pub fn work(worker: &mut Worker, job: &Job) -> Result<Outcome, LabError> {
    // TODO: take the lock of the resource. `Held` tells you three things:
    // the lock key, the lease it hangs on, and the revision that created
    // the key. Which number does etcd raise for every new holder, whichever
    // member answers and whichever member leads? That one is your fencing
    // token; the others are not.
    //
    // TODO: install the token at the destination before acting. If
    // `install_generation` says a higher generation is already installed,
    // a newer holder has been there while you were away: stop, without
    // calling apply, with `LabError::Superseded`.
    //
    // TODO: apply the request with the token you installed, and with the
    // job's request id exactly as it is: a retry of the same job must be
    // recognised as the same request.
    //
    // What a stop returns: any error, as long as apply is never called.
    // `LabError::Superseded` when a newer generation is installed; the
    // error you got, passed on unchanged, when taking the lock fails or
    // your lease is gone (`worker.lease_ttl()`). Never fall back to acting
    // with a generation you did not install.
    //
    // Hint: holding the lock is not a proof. A frozen process still
    // believes it holds it when it wakes up, and may be frozen between any
    // two of your calls (a check of the lease and a read, say).
    let _ = (worker, job);
    todo!("work: take the lock, install the token, then act with it")
}
