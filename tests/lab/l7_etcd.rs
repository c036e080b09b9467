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

use std::process::Command;

use fencing_lab::claims::Track;
use fencing_lab::etcd::{
    Cluster, Coordinator, Job, Missed, Moment, Role, Spec, WorkerProcess, cluster,
};
use fencing_lab::{Journal, Lab, describe_error};

use crate::support::{A, Check, claim_on};

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

/// The checks of claim `id` on the etcd track.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Etcd, id)
}

/// The cluster a test runs on.
enum OnCluster {
    Shared(&'static Cluster),
    Own(Cluster),
}

impl OnCluster {
    fn get(&self) -> &Cluster {
        match self {
            OnCluster::Shared(cluster) => cluster,
            OnCluster::Own(cluster) => cluster,
        }
    }
}

/// One test's world: a cluster, a fresh SQLite lab (`fund-A` at
/// generation 1), the endpoint its workers use, and the test's own
/// connection to the cluster.
pub struct World {
    cluster: OnCluster,
    pub lab: Lab,
    namespace: String,
    endpoint: String,
    coordinator: Coordinator,
}

impl World {
    /// On the process's shared cluster; workers connect to member 0.
    pub fn shared(c: &Check) -> World {
        let cluster = cluster::shared()
            .unwrap_or_else(|error| c.not_run("start an etcd cluster", describe_error(&error)));
        World::on(c, OnCluster::Shared(cluster), 0)
    }

    /// On a cluster of its own; workers connect to a member that does not
    /// lead now, so killing the leader never cuts them off.
    pub fn own(c: &Check) -> World {
        let cluster = Cluster::start()
            .unwrap_or_else(|error| c.not_run("start an etcd cluster", describe_error(&error)));
        let leader = cluster
            .leader(0)
            .unwrap_or_else(|error| c.not_run("find the leader", describe_error(&error)));
        let endpoint = cluster.follower_of(&leader);
        World::on(c, OnCluster::Own(cluster), endpoint)
    }

    fn on(c: &Check, cluster: OnCluster, member: usize) -> World {
        let lab = Lab::new(Journal::Rollback)
            .unwrap_or_else(|error| c.not_run("create the lab", describe_error(&error)));
        let test = std::thread::current()
            .name()
            .unwrap_or("test")
            .replace("::", ".");
        let namespace = format!("{}-{test}", std::process::id());
        let endpoint = cluster.get().endpoint(member).to_owned();
        let coordinator = Coordinator::connect(std::slice::from_ref(&endpoint), &namespace)
            .unwrap_or_else(|error| c.not_run("connect to the cluster", describe_error(&error)));
        World {
            cluster,
            lab,
            namespace,
            endpoint,
            coordinator,
        }
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        self.cluster.get()
    }

    /// Starts a worker process on `job`, stopping at `pause`.
    pub fn worker(&self, c: &Check, role: Role, job: Job, pause: &[Moment]) -> WorkerProcess {
        let spec = Spec {
            role,
            endpoints: vec![self.endpoint.clone()],
            namespace: self.namespace.clone(),
            lab: self.lab.path().to_owned(),
            job,
            pause: pause.to_vec(),
            ttl: 60,
        };
        WorkerProcess::start(this_test(), &spec)
            .unwrap_or_else(|error| c.not_run("start a worker process", describe_error(&error)))
    }

    /// Lets the lease of whoever holds `fund-A`'s lock go, as if it had run
    /// out, and waits (on a watch) until the lock key is gone. Returns the
    /// lease.
    pub fn expire_holder(&mut self, c: &Check) -> i64 {
        let holder = match self.coordinator.holder(A) {
            Ok(Some(holder)) => holder,
            Ok(None) => c.not_run("find the lock's holder", "nobody holds the lock"),
            Err(error) => c.not_run("find the lock's holder", describe_error(&error)),
        };
        self.coordinator
            .revoke(holder.lease)
            .and_then(|()| self.coordinator.wait_until_deleted(&holder.key))
            .unwrap_or_else(|error| c.not_run("revoke the holder's lease", describe_error(&error)));
        holder.lease
    }

    /// Revokes `lease`, as if it had run out.
    pub fn revoke(&mut self, c: &Check, lease: i64) {
        self.coordinator
            .revoke(lease)
            .unwrap_or_else(|error| c.not_run("revoke a worker's lease", describe_error(&error)));
    }

    /// The generation installed at `fund-A` now.
    pub fn generation(&self, c: &Check) -> i64 {
        self.lab
            .state(A)
            .map(|state| state.generation)
            .unwrap_or_else(|error| c.not_run("read the lab", describe_error(&error)))
    }
}

/// A job on `fund-A`.
pub fn job(request_id: &str, delta: i64) -> Job {
    Job {
        resource: A.to_owned(),
        request_id: request_id.to_owned(),
        delta,
    }
}

/// This test binary, on the running test only: a worker process.
pub fn this_test() -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    let name = std::thread::current().name().unwrap_or_default().to_owned();
    let mut command = Command::new(exe);
    command.args(["--exact", &name, "--nocapture", "--test-threads", "1"]);
    command
}

/// What a worker's step came to: its report, or the learner's failure (the
/// worker ended before the moment the test waits for) as a failed step.
pub trait Expect<T> {
    /// The value, or fails `step` of the claim with the error.
    fn or_fail(self, c: &Check, step: &str) -> T;
}

impl<T, E: Into<Missed>> Expect<T> for Result<T, E> {
    #[track_caller]
    fn or_fail(self, c: &Check, step: &str) -> T {
        self.unwrap_or_else(|error| match error.into() {
            Missed::Finished(outcome) => c.fail(step, "the worker gets there", outcome),
            Missed::Harness(error) => c.not_run(step, describe_error(&error)),
        })
    }
}

mod coordinator;
mod leader;
mod transcript;
