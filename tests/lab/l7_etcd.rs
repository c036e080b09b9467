//! The etcd track (`--features etcd`), lesson L7: workers in processes of
//! their own take the lock of `fund-A` from a three-member etcd cluster and
//! act on the SQLite lab through your `install_generation` and `apply`.
//!
//! Each test starts its workers as processes (this test binary, started
//! again on the test's own name, with the job in its environment), freezes
//! them with SIGSTOP and wakes them with SIGCONT. The claims that kill no
//! member share one cluster per test process, each under a namespace of its
//! own; the leader-failure claim starts a cluster of its own. With no
//! `etcd` program to run, every test here fails as NOT CHECKED and says why.
//!
//! Every test runs its scene (`src/scenes/l7.rs`), the same that the etcd
//! chapter of `cargo run --features etcd` tells, one case of each.

use std::process::Command;

use fencing_lab::claims::Track;
use fencing_lab::describe_error;
use fencing_lab::etcd::{Cluster, cluster};
use fencing_lab::scenes::l7::World;

use crate::support::{Check, claim_on};

/// Under the grader, starts the process's shared cluster on a thread of its
/// own as soon as the verdict channel opens, so that its three members'
/// start and first election overlap the SQLite tests, which sort first.
/// Only when the run includes etcd tests, which wait for it (see
/// `crate::postgres::start_server_early`); a worker process never gets
/// here (`serve_if_worker` comes first in every test).
pub fn start_cluster_early() {
    if crate::support::run_includes("l7_etcd::") {
        std::thread::spawn(|| {
            // The result is kept; the first test to need it reports it.
            let _ = cluster::shared();
        });
    }
}

/// First in every etcd test: a worker process is this binary started again,
/// which does its job and exits here (with the functions handed to the
/// harness first); the test itself goes on.
pub fn serve_if_worker() {
    crate::support::wire();
    fencing_lab::etcd::serve_if_worker();
}

/// The checks of claim `id` on the etcd track.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Etcd, id)
}

/// A world (`fencing_lab::scenes::l7::World`) on the process's shared
/// cluster; workers connect to member 0.
pub fn shared(c: &Check) -> World<'static> {
    let cluster = cluster::shared()
        .unwrap_or_else(|error| c.not_run("start an etcd cluster", describe_error(&error)));
    on(c, cluster, 0)
}

/// A world on `cluster`, whose workers connect to its member `member`,
/// under a namespace named after the test, started as this test binary.
pub fn on<'c>(c: &Check, cluster: &'c Cluster, member: usize) -> World<'c> {
    let test = std::thread::current()
        .name()
        .unwrap_or("test")
        .replace("::", ".");
    let namespace = format!("{}-{test}", std::process::id());
    c.run(World::new(
        c,
        c.id(),
        cluster,
        member,
        namespace,
        &this_test,
    ))
}

/// This test binary, on the running test only: a worker process.
pub fn this_test() -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    let name = std::thread::current().name().unwrap_or_default().to_owned();
    let mut command = Command::new(exe);
    command.args(["--exact", &name, "--nocapture", "--test-threads", "1"]);
    command
}

mod coordinator;
mod leader;
mod transcript;
