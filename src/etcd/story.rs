//! The transcript's etcd chapter: a private cluster, workers as processes of
//! this program, a lease that really runs out while its holder is frozen, a
//! counterexample, a holder that finds it was superseded, and the leader's
//! process killed between two holders.
//!
//! The chapter starts its own cluster, so the cluster's revisions (the
//! tokens) are the same every time the same code runs; lease ids, ports,
//! process ids and member names are never printed.

use std::process::Command;

use crate::claims::Lesson;
use crate::etcd::{Cluster, Coordinator, Job, Missed, Moment, Role, Spec, WorkerProcess};
use crate::transcript::{Halt, Transcript};
use crate::{Journal, Lab, LabError};

const A: &str = "fund-A";

/// The chapter's heading.
pub const LESSON: Lesson = crate::claims::LESSONS[6];

/// A worker that finished before the moment the story waits for stops the
/// chapter with its outcome (an unfinished exercise says which file).
impl From<Missed> for Halt {
    fn from(missed: Missed) -> Self {
        match missed {
            Missed::Finished(outcome) => Halt(outcome),
            Missed::Harness(error) => Halt::from(error),
        }
    }
}

/// How a worker process is started: this program again (`lab`), or the test
/// binary on the running test.
pub type Program<'a> = &'a dyn Fn() -> Command;

/// The chapter, with workers started by `program`.
pub fn chapter(t: &Transcript, program: Program<'_>) -> Result<(), Halt> {
    t.note("Executed here: three etcd members (Debian's etcd program) on loopback ports, and each worker a process of this program.");
    let cluster = Cluster::start()?;
    let leader = cluster.leader(0)?;
    let endpoint = cluster.endpoint(cluster.follower_of(&leader)).to_owned();
    let mut scenes = Scenes {
        t,
        program,
        endpoint,
        number: 0,
    };

    t.note("A worker takes fund-A's lock under a lease of 2 s, installs its token, and is frozen (SIGSTOP) just before apply.");
    t.note("Frozen, it cannot keep its lease alive: the lease runs out and etcd deletes the lock key, seen here through a watch.");
    let s = scenes.next("L7.1")?;
    let mut first = s.start(Role::Yours, "w1", 5, &[Moment::Acting], 2)?;
    let token = s.held(&mut first, Moment::Acting, "worker 1")?;
    s.freeze(&mut first)?;
    // The key is `<lock name>/<lease in hex>`; if the lease ran out before
    // the watch began, the key is gone already and the wait ends at once.
    let mut watch = s.coordinator()?;
    let key = format!("{}/{:x}", watch.lock_name(A), first.lease()?);
    watch.wait_until_deleted(&key)?;
    s.say(
        "etcd",
        format_args!("the lease ran out; the lock key of revision {token} is deleted"),
    );
    s.second_holder("w2", 3)?;
    s.wake(first, "w1", 5)?;
    s.observe()?;

    t.note("The counterexample: the same schedule, where each worker trusts \"I hold the lock\" and presents the generation it reads.");
    t.note(
        "From here on the test revokes the frozen worker's lease, standing for one that ran out.",
    );
    let s = scenes.next("L7.2")?;
    let mut first = s.start(Role::TrustsTheLock, "w1", 5, &[Moment::Acting], 60)?;
    s.held(&mut first, Moment::Acting, "worker 1")?;
    s.freeze(&mut first)?;
    s.revoke()?;
    let report = s.start(Role::TrustsTheLock, "w2", 3, &[], 60)?.finish()?;
    s.say(
        "worker 2",
        format_args!("(trusting) takes the lock, apply(+3) -> {}", report.outcome),
    );
    first.thaw()?;
    let report = first.finish()?;
    s.say(
        "worker 1",
        format_args!("woken (SIGCONT), apply(+5) -> {}", report.outcome),
    );
    s.say(
        "",
        "the old holder's write went through: the lock alone fences nothing",
    );
    s.observe()?;

    t.note(
        "A worker frozen right after taking the lock wakes to find a newer generation installed.",
    );
    let s = scenes.next("L7.4")?;
    let mut first = s.start(Role::Yours, "w1", 5, &[Moment::Locked], 60)?;
    s.held(&mut first, Moment::Locked, "worker 1")?;
    s.freeze(&mut first)?;
    s.revoke()?;
    s.second_holder("w2", 3)?;
    s.wake(first, "w1", 5)?;
    s.observe()?;

    t.note("The leader's process is killed (SIGKILL) between two holders; the two other members elect a new one.");
    let s = scenes.next("L7.3")?;
    let mut first = s.start(Role::Yours, "w1", 5, &[Moment::Acting], 60)?;
    s.held(&mut first, Moment::Acting, "worker 1")?;
    s.freeze(&mut first)?;
    let old = cluster.leader(0)?;
    cluster.kill(old.member)?;
    cluster.leader(old.term + 1)?;
    s.say(
        "etcd",
        format_args!(
            "the leader's process killed; the {} members left elected a new leader",
            cluster.endpoints().len(),
        ),
    );
    s.revoke()?;
    s.second_holder("w2", 3)?;
    s.wake(first, "w1", 5)?;
    s.observe()?;
    t.note("Lost responses retried after the lock changed hands, and where a token must not come from, are L7.5's and L7.6's tests (tests/lab/l7_etcd/).");
    Ok(())
}

/// Numbers each scene's lab and lock names.
struct Scenes<'a> {
    t: &'a Transcript,
    program: Program<'a>,
    endpoint: String,
    number: u32,
}

impl<'a> Scenes<'a> {
    /// A scene of `claim`: a fresh lab (`fund-A` at generation 1) and a
    /// namespace of its own.
    fn next(&mut self, claim: &'static str) -> Result<Scene<'a>, Halt> {
        self.number += 1;
        Ok(Scene {
            t: self.t,
            program: self.program,
            claim,
            endpoint: self.endpoint.clone(),
            namespace: format!("story-{}-{}", std::process::id(), self.number),
            lab: Lab::new(Journal::Rollback)?,
        })
    }
}

/// One scene.
struct Scene<'a> {
    t: &'a Transcript,
    program: Program<'a>,
    claim: &'static str,
    endpoint: String,
    namespace: String,
    lab: Lab,
}

impl Scene<'_> {
    fn say(&self, role: &str, text: impl std::fmt::Display) {
        self.t.line(self.claim, role, text);
    }

    fn coordinator(&self) -> Result<Coordinator, LabError> {
        Coordinator::connect(std::slice::from_ref(&self.endpoint), &self.namespace)
    }

    fn start(
        &self,
        role: Role,
        request_id: &str,
        delta: i64,
        pause: &[Moment],
        ttl: i64,
    ) -> Result<WorkerProcess, LabError> {
        let spec = Spec {
            role,
            endpoints: vec![self.endpoint.clone()],
            namespace: self.namespace.clone(),
            lab: self.lab.path().to_owned(),
            job: Job {
                resource: A.to_owned(),
                request_id: request_id.to_owned(),
                delta,
            },
            pause: pause.to_vec(),
            ttl,
        };
        WorkerProcess::start((self.program)(), &spec)
    }

    /// Waits for `worker` at `moment` and tells what it holds: the lock's
    /// revision, and the generation installed by then.
    fn held(&self, worker: &mut WorkerProcess, moment: Moment, who: &str) -> Result<i64, Halt> {
        worker.wait_at(moment)?;
        let token = worker.revisions().last().copied().unwrap_or_default();
        let generation = self.lab.state(A)?.generation;
        self.say(
            who,
            format_args!(
                "took the lock (key revision {token}); fund-A has generation {generation}; stopped {moment}"
            ),
        );
        Ok(token)
    }

    fn freeze(&self, worker: &mut WorkerProcess) -> Result<(), Halt> {
        worker.freeze()?;
        worker.go()?;
        self.say(
            "test",
            format_args!(
                "SIGSTOP worker 1: the kernel shows it stopped (state {})",
                worker.kernel_state()
            ),
        );
        Ok(())
    }

    /// Revokes the holder's lease and waits until its lock key is gone.
    fn revoke(&self) -> Result<(), Halt> {
        let mut coordinator = self.coordinator()?;
        if let Some(holder) = coordinator.holder(A)? {
            coordinator.revoke(holder.lease)?;
            coordinator.wait_until_deleted(&holder.key)?;
            self.say(
                "test",
                format_args!(
                    "revokes worker 1's lease: the lock key of revision {} is deleted",
                    holder.revision
                ),
            );
        }
        Ok(())
    }

    /// Worker 2 does its whole job.
    fn second_holder(&self, request_id: &str, delta: i64) -> Result<(), Halt> {
        let mut second = self.start(Role::Yours, request_id, delta, &[], 60)?;
        let _ = second.lease()?;
        let report = second.finish()?;
        let generation = self.lab.state(A)?.generation;
        self.say(
            "worker 2",
            format_args!(
                "takes the lock, installs, apply({delta:+}) -> {}; fund-A has generation {generation}",
                report.outcome
            ),
        );
        Ok(())
    }

    /// Wakes worker 1 and tells how its job ended.
    fn wake(&self, first: WorkerProcess, request_id: &str, delta: i64) -> Result<(), Halt> {
        let mut first = first;
        first.thaw()?;
        let report = first.finish()?;
        self.say(
            "worker 1",
            format_args!(
                "woken (SIGCONT), goes on with {request_id} ({delta:+}) -> {}; apply called {} time(s)",
                report.outcome, report.applies
            ),
        );
        Ok(())
    }

    fn observe(&self) -> Result<(), Halt> {
        let state = self.lab.state(A)?;
        let records = crate::transcript::records_line(&self.lab.records(A)?);
        self.say("observer", format_args!("{A}: {state}; {records}"));
        Ok(())
    }
}
