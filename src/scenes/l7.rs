//! L7, the etcd track (feature `etcd`): workers in processes of their own
//! take `fund-A`'s lock under a lease from a private three-member etcd
//! cluster, and act on a SQLite lab (the reference's `install_generation`
//! and `apply`) with the learner's `exercises/etcd/worker.rs`.
//!
//! A scene runs in a [`World`]: a cluster, a fresh lab, a namespace for the
//! lock names, and the program that a worker process is started as (the
//! test binary on its running test, or `lab` for the story). What the
//! harness cannot do (start a process, reach the cluster) makes the scene
//! NOT CHECKED through [`Observer::not_checked`], never a verdict on the
//! learner's worker.

use std::process::Command;

use crate::claims::facts::{Coordination, Event};

use super::expect::{applied, rec, replayed, stale};
use super::{A, Observer, Stage};
use crate::etcd::{Cluster, Coordinator, Job, Missed, Moment, Report, Role, Spec, WorkerProcess};
use crate::transcript::Halt;
use crate::{Journal, Lab, describe_error};

/// How a worker process is started: this program again (`lab`), or the test
/// binary on the running test.
pub type Program<'a> = &'a dyn Fn() -> Command;

/// A stage of the etcd track: the scene's claim, reported to its observer,
/// on the world's lab.
type S<'o> = Stage<'o, Lab>;

/// How the frozen holder's lease ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lapse {
    /// It is revoked, standing for a lease that ran out: at once, and the
    /// same every time (the tests).
    Revoked,
    /// It really runs out: a lease of 2 s that the frozen holder cannot
    /// keep alive, until etcd deletes the lock key, seen through a watch
    /// (the story).
    RunsOut,
}

/// Where a scene runs: a cluster, a fresh SQLite lab (`fund-A` at
/// generation 1), the endpoint its workers use, a namespace of its own for
/// the lock names, and the scene's own connection to the cluster.
pub struct World<'a> {
    cluster: &'a Cluster,
    /// The destination the workers act on.
    pub lab: Lab,
    namespace: String,
    endpoint: String,
    coordinator: Coordinator,
    program: Program<'a>,
    /// The test's and etcd's numbers in the lab's events, beside the
    /// workers' ([`World::tell`]).
    test: usize,
    etcd: usize,
}

impl<'a> World<'a> {
    /// A world on `cluster` whose workers connect to its member `member`,
    /// under `namespace`, started as `program`. What the harness cannot set
    /// up is reported to `o` as NOT CHECKED under `claim`.
    pub fn new(
        o: &dyn Observer,
        claim: &'static str,
        cluster: &'a Cluster,
        member: usize,
        namespace: String,
        program: Program<'a>,
    ) -> Result<World<'a>, Halt> {
        let lab = Lab::new(Journal::Rollback)
            .map_err(|error| o.not_checked(claim, "create the lab", &describe_error(&error)))?;
        let endpoint = cluster.endpoint(member).to_owned();
        let coordinator = Coordinator::connect(std::slice::from_ref(&endpoint), &namespace)
            .map_err(|error| {
                o.not_checked(claim, "connect to the cluster", &describe_error(&error))
            })?;
        let trace = lab.trace();
        let (test, etcd) = (trace.join(), trace.join());
        trace.name(test, "test");
        trace.name(etcd, "etcd");
        Ok(World {
            cluster,
            lab,
            namespace,
            endpoint,
            coordinator,
            program,
            test,
            etcd,
        })
    }

    /// Adds to the lab's events what the test did (`by_test`) or etcd did
    /// outside the destination: what a failing step's picture shows
    /// between the workers' calls.
    fn tell(&self, by_test: bool, what: Coordination) {
        let actor = if by_test { self.test } else { self.etcd };
        self.lab.trace().record(Event::Coordinated { actor, what });
    }

    /// The cluster.
    pub fn cluster(&self) -> &'a Cluster {
        self.cluster
    }

    /// Starts the worker process the scene calls `name` on `job`, stopping
    /// at `pause`, under a lease of 60 s.
    fn worker(
        &self,
        s: &S<'_>,
        name: &str,
        role: Role,
        job: Job,
        pause: &[Moment],
    ) -> Result<WorkerProcess, Halt> {
        self.worker_leased(s, name, role, job, pause, 60)
    }

    /// [`World::worker`], under a lease of `ttl` seconds. What the worker
    /// reports it did joins the lab's events as `name`'s.
    fn worker_leased(
        &self,
        s: &S<'_>,
        name: &str,
        role: Role,
        job: Job,
        pause: &[Moment],
        ttl: i64,
    ) -> Result<WorkerProcess, Halt> {
        let spec = Spec {
            role,
            endpoints: vec![self.endpoint.clone()],
            namespace: self.namespace.clone(),
            lab: self.lab.path().to_owned(),
            job,
            pause: pause.to_vec(),
            ttl,
        };
        let mut process = WorkerProcess::start((self.program)(), &spec)
            .map_err(|error| s.not_checked("start a worker process", describe_error(&error)))?;
        let trace = self.lab.trace();
        let actor = trace.join();
        trace.name(actor, name);
        process.trace_into(trace, actor);
        Ok(process)
    }

    /// Lets the lease of whoever holds `fund-A`'s lock go (`worker`, in the
    /// lab's events), as if it had run out, and waits (on a watch) until
    /// the lock key is gone. Returns the lease.
    fn expire_holder(&mut self, s: &S<'_>, worker: usize) -> Result<i64, Halt> {
        let holder = match self.coordinator.holder(A) {
            Ok(Some(holder)) => holder,
            Ok(None) => {
                return Err(s.not_checked("find the lock's holder", "nobody holds the lock"));
            }
            Err(error) => {
                return Err(s.not_checked("find the lock's holder", describe_error(&error)));
            }
        };
        self.coordinator
            .revoke(holder.lease)
            .and_then(|()| self.coordinator.wait_until_deleted(&holder.key))
            .map_err(|error| s.not_checked("revoke the holder's lease", describe_error(&error)))?;
        self.tell(false, Coordination::LeaseEnded { worker });
        s.say(
            "test",
            format_args!(
                "revokes worker 1's lease: the lock key of revision {} is deleted",
                holder.revision
            ),
        );
        Ok(holder.lease)
    }

    /// Waits, on a watch, until etcd deletes the lock key that `lease`
    /// holds, once the lease has run out. (If it ran out before the watch
    /// began, the key is gone already and the wait ends at once.)
    fn wait_until_lease_runs_out(&mut self, s: &S<'_>, lease: i64) -> Result<(), Halt> {
        // The key is `<lock name>/<lease in hex>`.
        let key = format!("{}/{lease:x}", self.coordinator.lock_name(A));
        self.coordinator
            .wait_until_deleted(&key)
            .map_err(|error| s.not_checked("watch the lock key", describe_error(&error)))
    }

    /// Revokes `lease`, `worker`'s, as if it had run out.
    fn revoke(&mut self, s: &S<'_>, lease: i64, worker: usize) -> Result<(), Halt> {
        self.coordinator
            .revoke(lease)
            .map_err(|error| s.not_checked("revoke a worker's lease", describe_error(&error)))?;
        self.tell(false, Coordination::LeaseEnded { worker });
        Ok(())
    }

    /// The generation installed at `fund-A` now.
    fn generation(&self, s: &S<'_>) -> Result<i64, Halt> {
        self.lab
            .state(A)
            .map(|state| state.generation)
            .map_err(|error| s.not_checked("read the lab", describe_error(&error)))
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

/// What a worker's step came to: its value, or the worker's failure (it
/// ended before the moment the scene waits for) as a failed `step`, or the
/// harness's as NOT CHECKED.
fn reached<T, E: Into<Missed>>(s: &S<'_>, result: Result<T, E>, step: &str) -> Result<T, Halt> {
    match result.map_err(Into::into) {
        Ok(value) => Ok(value),
        Err(Missed::Finished(outcome)) => {
            s.fail(step, "the worker gets there", &outcome)?;
            Err(Halt(outcome))
        }
        Err(Missed::Harness(error)) => Err(s.not_checked(step, describe_error(&error))),
    }
}

/// What the frozen schedule came to.
struct Frozen {
    /// The generation installed when worker 1 was frozen.
    before: i64,
    /// The generation worker 2 left installed.
    after: i64,
    /// Worker 1's report, once woken.
    first: Report,
}

/// Worker 1 runs `role` (`w1`, +5) up to `at` and is frozen there
/// (SIGSTOP); its lease lapses as `lapse` says; worker 2, same role, takes
/// the lock and does its job (`w2`, +3); worker 1 is woken (SIGCONT) and
/// finishes its job.
///
/// If `optional` (a moment a correct worker need not reach: a read of the
/// generation), a worker that finishes without reaching it must have done
/// its job (+5) like any other; then there is no schedule (`None`).
fn frozen_schedule(
    s: &S<'_>,
    w: &mut World<'_>,
    role: Role,
    at: Moment,
    lapse: Lapse,
    optional: bool,
) -> Result<Option<Frozen>, Halt> {
    let ttl = match lapse {
        Lapse::Revoked => 60,
        Lapse::RunsOut => 2,
    };
    let mut first = w.worker_leased(s, "worker 1", role, job("w1", 5), &[at], ttl)?;
    let worker1 = first.actor();
    loop {
        match first.wait_at(at) {
            // A worker that reads the generation before it takes the lock
            // is frozen at a read it makes holding the lock, if any.
            Ok(()) if optional && first.revisions().is_empty() => {
                reached(s, first.go(), "let worker 1 go on to take the lock")?;
            }
            Ok(()) => break,
            Err(Missed::Finished(outcome)) if optional => {
                s.say(
                    "worker 1",
                    format_args!("never stopped {at} holding the lock: its job (+5) -> {outcome}"),
                );
                s.same(
                    format_args!(
                        "worker 1, which never stopped {at} holding the lock: its job (+5)"
                    ),
                    applied(5),
                    outcome,
                )?;
                let generation = w.generation(s)?;
                s.state(A, generation, 5)?;
                return Ok(None);
            }
            Err(missed) => {
                let step = format!("worker 1, up to the moment {at}");
                return reached(s, Err::<(), _>(missed), &step).map(|()| None);
            }
        }
    }
    let before = w.generation(s)?;
    let token = holds(s, &first, before, at);
    freeze(s, w, &mut first)?;
    match lapse {
        Lapse::Revoked => {
            w.expire_holder(s, worker1)?;
        }
        Lapse::RunsOut => {
            let lease = reached(s, first.lease(), "worker 1's lease")?;
            w.wait_until_lease_runs_out(s, lease)?;
            w.tell(false, Coordination::LeaseEnded { worker: worker1 });
            s.say(
                "etcd",
                format_args!("the lease ran out; the lock key of revision {token} is deleted"),
            );
        }
    }
    let after = second_holder(
        s,
        w,
        role,
        "worker 2: take the lock, install, apply(+3)",
        "worker 2, the new holder: its job (+3)",
    )?;
    let first = wake(s, w, first, role, "worker 1, woken: the rest of its job")?;
    Ok(Some(Frozen {
        before,
        after,
        first,
    }))
}

/// [`frozen_schedule`] at a moment every worker reaches.
fn frozen(s: &S<'_>, w: &mut World<'_>, role: Role, at: Moment) -> Result<Frozen, Halt> {
    frozen_schedule(s, w, role, at, Lapse::Revoked, false)?
        .ok_or_else(|| Halt(format!("worker 1 never stopped {at}")))
}

/// Tells what worker 1, stopped at `at`, holds: the lock's revision, and the
/// generation installed by then (`before`). Returns the revision.
fn holds(s: &S<'_>, first: &WorkerProcess, before: i64, at: Moment) -> i64 {
    let token = first.revisions().last().copied().unwrap_or_default();
    s.say(
        "worker 1",
        format_args!(
            "took the lock (key revision {token}); fund-A has generation {before}; stopped {at}"
        ),
    );
    token
}

/// Freezes worker 1 (SIGSTOP), checks that the kernel shows it stopped,
/// and tells it to go on: the line waits in the pipe, since a frozen
/// process cannot read it.
fn freeze(s: &S<'_>, w: &World<'_>, first: &mut WorkerProcess) -> Result<(), Halt> {
    reached(s, first.freeze(), "freeze worker 1 (SIGSTOP)")?;
    w.tell(
        true,
        Coordination::Froze {
            worker: first.actor(),
        },
    );
    let state = first.kernel_state();
    s.say(
        "test",
        format_args!("SIGSTOP worker 1: the kernel shows it stopped (state {state})"),
    );
    s.same("worker 1's process, frozen", "T", state)?;
    reached(s, first.go(), "tell worker 1 to go on")
}

/// Worker 2 does its whole job (`w2`, +3) in `role`; it must be applied.
/// `finished` and `done` name the two steps. Returns the generation it
/// left installed.
fn second_holder(
    s: &S<'_>,
    w: &World<'_>,
    role: Role,
    finished: &str,
    done: &str,
) -> Result<i64, Halt> {
    let second = w.worker(s, "worker 2", role, job("w2", 3), &[])?;
    let report = reached(s, second.finish(), finished)?;
    let after = w.generation(s)?;
    match role {
        Role::Yours => s.say(
            "worker 2",
            format_args!(
                "takes the lock, installs, apply(+3) -> {}; fund-A has generation {after}",
                report.outcome
            ),
        ),
        Role::TrustsTheLock => s.say(
            "worker 2",
            format_args!("(trusting) takes the lock, apply(+3) -> {}", report.outcome),
        ),
    }
    s.same(done, applied(3), &report.outcome)?;
    Ok(after)
}

/// Whether a worker's answer says its job was done (applied, or replayed
/// from an earlier apply): judged beside how often it called apply, a job
/// that never reached apply must not be reported as done.
fn answered_done(outcome: &str) -> bool {
    outcome.starts_with("applied") || outcome.starts_with("replayed")
}

/// Wakes worker 1 (SIGCONT), which finishes its job (`finished` names the
/// step), and tells how it ended.
fn wake(
    s: &S<'_>,
    w: &World<'_>,
    mut first: WorkerProcess,
    role: Role,
    finished: &str,
) -> Result<Report, Halt> {
    reached(s, first.thaw(), "wake worker 1 (SIGCONT)")?;
    w.tell(
        true,
        Coordination::Woke {
            worker: first.actor(),
        },
    );
    let report = reached(s, first.finish(), finished)?;
    match role {
        Role::Yours => s.say(
            "worker 1",
            format_args!(
                "woken (SIGCONT), goes on with w1 (+5) -> {}; apply called {} time(s)",
                report.outcome, report.applies
            ),
        ),
        Role::TrustsTheLock => s.say(
            "worker 1",
            format_args!("woken (SIGCONT), apply(+5) -> {}", report.outcome),
        ),
    }
    Ok(report)
}

/// L7.1: worker 1, frozen at `at` (about to call apply, just after its
/// install returned, or about to read the installed generation), loses its
/// lease as `lapse` says; worker 2 takes the lock and writes; woken, worker
/// 1 is refused as stale, or stops by itself before calling apply.
///
/// A worker frozen at a read, having checked its lease, finds the new
/// holder's generation there. A worker that never reads the generation is
/// not stopped there, and must simply do its job.
pub fn frozen_worker_is_refused_as_stale(
    o: &dyn Observer,
    w: &mut World<'_>,
    at: Moment,
    lapse: Lapse,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.1", &w.lab);
    let optional = at == Moment::Reading;
    let Some(run) = frozen_schedule(&s, w, Role::Yours, at, lapse, optional)? else {
        return Ok(());
    };
    // Frozen at a read, worker 1 may not have installed yet (a worker that
    // reads first): the two checks of its token are the other cases'.
    if !optional && run.before <= 1 {
        s.fail(
            "worker 1, holding the lock, before apply",
            "its token installed: a generation above 1",
            format!("generation {} installed", run.before),
        )?;
    }
    if !optional && run.after <= run.before {
        s.fail(
            "worker 2, the next holder",
            format!("a generation above worker 1's {}", run.before),
            format!("generation {} installed", run.after),
        )?;
    }
    // Refused by the destination as stale; or, frozen before it called
    // apply, stopped by the worker itself (a check of its own before
    // acting is no mistake). As in L7.4, judged by what happened: any stop
    // in which apply was never called is a stop, whatever its error
    // (Superseded, a refusal of its own, the lost lease's error).
    let refused = stale(run.before, run.after);
    // A stop answers with an error: a job never applied that is reported
    // as done is no stop, but a second mistake.
    let stopped_itself = run.first.applies == 0 && !answered_done(&run.first.outcome);
    // Frozen at a read, the token it presents may not be installed yet
    // when it is frozen: any stale refusal under worker 2's generation.
    let any_stale = stale(i64::MIN, run.after);
    let refused_at_read = optional
        && any_stale
            .split_once(&i64::MIN.to_string())
            .is_some_and(|(head, tail)| {
                run.first.outcome.starts_with(head) && run.first.outcome.ends_with(tail)
            });
    if run.first.outcome != refused && !stopped_itself && !refused_at_read {
        let superseded = describe_error(&crate::LabError::Superseded {
            token: run.before,
            installed: run.after,
        });
        s.fail(
            "worker 1, woken after worker 2 wrote: apply(+5)",
            format!("{refused} (or a stop before calling apply, such as {superseded})"),
            format!(
                "{}; apply called {} time(s)",
                run.first.outcome, run.first.applies
            ),
        )?;
    }
    s.observe(A, run.after, 3, &[rec(A, "w2", 3, 3, run.after)])
}

/// L7.2, the counterexample: the frozen schedule, where each worker trusts
/// "I hold the lock" and presents the generation it reads. The woken
/// holder's write goes through.
pub fn trusting_worker_lets_the_woken_write_through(
    o: &dyn Observer,
    w: &mut World<'_>,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.2", &w.lab);
    let run = frozen(&s, w, Role::TrustsTheLock, Moment::Acting)?;
    s.same(
        "the trusting worker 1, woken after worker 2 wrote: apply(+5)",
        applied(8),
        &run.first.outcome,
    )?;
    s.say(
        "",
        "the old holder's write went through: the lock alone fences nothing",
    );
    s.tell_state(A)?;
    s.state(A, 1, 8)
}

/// L7.2, yours in the same schedule: the woken holder's write is refused.
pub fn yours_refuses_the_woken_write(o: &dyn Observer, w: &mut World<'_>) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.2", &w.lab);
    let run = frozen(&s, w, Role::Yours, Moment::Acting)?;
    if run.first.outcome.starts_with("applied") {
        s.fail(
            "your worker 1, woken after worker 2 wrote: apply(+5)",
            "refused: the destination tells the old holder from the new one",
            &run.first.outcome,
        )?;
    }
    s.tell_state(A)?;
    s.state(A, run.after, 3)
}

/// L7.4: worker 1, frozen right after taking the lock, loses its lease;
/// worker 2 takes the lock and writes; woken, worker 1 finds a newer
/// generation installed and stops without calling apply.
pub fn holder_frozen_after_locking_stops_without_applying(
    o: &dyn Observer,
    w: &mut World<'_>,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.4", &w.lab);
    let run = frozen(&s, w, Role::Yours, Moment::Locked)?;
    // Superseded is what the exercise asks for; passing install's own
    // refusal on, or any error of the worker's own, stops it just as well:
    // judged by what happened, apply never called.
    if run.first.applies != 0 || answered_done(&run.first.outcome) {
        s.fail(
            "worker 1, woken holding a lock that passed on, finds a newer generation installed",
            "it stops (LabError::Superseded) and never calls apply",
            format!(
                "{}; apply called {} time(s)",
                run.first.outcome, run.first.applies
            ),
        )?;
    }
    s.observe(A, run.after, 3, &[rec(A, "w2", 3, 3, run.after)])
}

/// L7.4: taking the lock fails, since the worker's lease is revoked before
/// the lock is granted (it stands for a lease that ran out while the worker
/// waited). The worker must not act: no lock, no token, no apply. Then a
/// worker whose lease is alive does its job, as usual.
pub fn lease_lost_before_the_lock_is_granted(
    o: &dyn Observer,
    w: &mut World<'_>,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.4", &w.lab);
    let start = w.generation(&s)?;

    let mut first = w.worker(
        &s,
        "worker 1",
        Role::Yours,
        job("w1", 5),
        &[Moment::Started],
    )?;
    reached(
        &s,
        first.wait_at(Moment::Started),
        "worker 1, started, before taking the lock",
    )?;
    let lease = reached(&s, first.lease(), "worker 1's lease")?;
    w.revoke(&s, lease, first.actor())?;
    s.say("test", "revokes worker 1's lease before it takes the lock");
    reached(&s, first.go(), "let worker 1 go on to take the lock")?;
    let report = reached(
        &s,
        first.finish(),
        "worker 1: its job (+5), its lease revoked",
    )?;
    s.say(
        "worker 1",
        format_args!(
            "takes the lock, its lease gone: its job (+5) -> {}; apply called {} time(s)",
            report.outcome, report.applies
        ),
    );
    if report.applies != 0 || answered_done(&report.outcome) {
        s.fail(
            "worker 1, whose lease was revoked before it took the lock: its job (+5)",
            "taking the lock fails, and it stops without calling apply",
            format!(
                "{}; apply called {} time(s)",
                report.outcome, report.applies
            ),
        )?;
    }
    s.state(A, start, 0)?;
    s.records(A, &[])?;

    // The lock still serves a worker whose lease is alive.
    let second = w.worker(&s, "worker 2", Role::Yours, job("w2", 3), &[])?;
    let second = reached(
        &s,
        second.finish(),
        "worker 2, its lease alive: its job (+3)",
    )?;
    let after = w.generation(&s)?;
    s.say(
        "worker 2",
        format_args!(
            "its lease alive: its job (+3) -> {}; fund-A has generation {after}",
            second.outcome
        ),
    );
    s.same(
        "worker 2, its lease alive: its job (+3)",
        applied(3),
        &second.outcome,
    )?;
    s.records(A, &[rec(A, "w2", 3, 3, after)])
}

/// L7.3: worker 1 is frozen about to call apply; the cluster's leader is
/// killed (SIGKILL) and the two other members elect a new one; worker 1's
/// lease is revoked; worker 2 takes the lock under the new leader with a
/// higher token and writes; woken, worker 1 is refused as stale. The
/// workers connect to a member that does not lead when the scene starts.
pub fn leader_killed_between_two_holders(o: &dyn Observer, w: &mut World<'_>) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.3", &w.lab);
    let mut first = w.worker(&s, "worker 1", Role::Yours, job("w1", 5), &[Moment::Acting])?;
    reached(&s, first.wait_at(Moment::Acting), "worker 1, up to apply")?;
    let before = w.generation(&s)?;
    holds(&s, &first, before, Moment::Acting);
    freeze(&s, w, &mut first)?;

    // SIGKILL the leader; wait until the two others follow a new one.
    let cluster = w.cluster();
    let old = cluster
        .leader(0)
        .map_err(|error| s.not_checked("find the leader", describe_error(&error)))?;
    cluster
        .kill(old.member)
        .map_err(|error| s.not_checked("kill the leader", describe_error(&error)))?;
    let new = cluster
        .leader(old.term + 1)
        .map_err(|error| s.not_checked("elect a new leader", describe_error(&error)))?;
    if new.member == old.member {
        return Err(s.not_checked("elect a new leader", "the killed member still leads"));
    }
    w.tell(false, Coordination::LeaderReplaced);
    s.say(
        "etcd",
        format_args!(
            "the leader's process killed; the {} members left elected a new leader",
            cluster.endpoints().len(),
        ),
    );

    w.expire_holder(&s, first.actor())?;
    let after = second_holder(
        &s,
        w,
        Role::Yours,
        "worker 2, under the new leader",
        "worker 2, under the new leader: its job (+3)",
    )?;
    if after <= before {
        s.fail(
            "worker 2, the first holder after the leader died",
            format!("a generation above worker 1's {before}"),
            format!("generation {after}"),
        )?;
    }

    let first = wake(&s, w, first, Role::Yours, "worker 1, woken")?;
    s.same(
        "worker 1, woken after the leader died and worker 2 wrote: apply(+5)",
        stale(before, after),
        &first.outcome,
    )?;
    s.observe(A, after, 3, &[rec(A, "w2", 3, 3, after)])
}

/// L7.5: worker 1 applies `r1` (+5) and its process dies before it can
/// report; the lock passes on and worker 2 applies `r2` (+3); the retry of
/// `r1`, in a new process under a newer token, gets its original result.
pub fn retry_of_a_lost_response_gets_the_original(
    o: &dyn Observer,
    w: &mut World<'_>,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.5", &w.lab);

    let mut first = w.worker(
        &s,
        "worker 1",
        Role::Yours,
        job("r1", 5),
        &[Moment::Returned],
    )?;
    let worker1 = first.actor();
    reached(
        &s,
        first.wait_at(Moment::Returned),
        "worker 1: its job (+5), up to its report",
    )?;
    let after_first = w.generation(&s)?;
    s.say(
        "worker 1",
        format_args!(
            "r1 (+5), stopped {}; fund-A has generation {after_first}",
            Moment::Returned
        ),
    );
    s.state(A, after_first, 5)?;
    reached(
        &s,
        first.kill(),
        "kill worker 1 (SIGKILL) before it reports",
    )?;
    w.tell(true, Coordination::Killed { worker: worker1 });
    s.say("test", "SIGKILL worker 1: its result is never reported");
    w.expire_holder(&s, worker1)?;

    // The lock passes on: worker 2 applies r2 (+3).
    let second = w.worker(&s, "worker 2", Role::Yours, job("r2", 3), &[])?;
    let second = reached(&s, second.finish(), "worker 2: its job (+3)")?;
    s.say("worker 2", format_args!("r2 (+3) -> {}", second.outcome));
    s.same("worker 2: its job (+3)", applied(8), &second.outcome)?;

    // The retry of r1, in a new process, under a newer token.
    let retry = w.worker(&s, "worker 1, retrying", Role::Yours, job("r1", 5), &[])?;
    let retry = reached(&s, retry.finish(), "worker 1's retry of r1 (+5)")?;
    s.say(
        "worker 1",
        format_args!("retries r1 (+5) -> {}", retry.outcome),
    );
    s.same(
        "worker 1's retry of r1 (+5), after the lock changed hands twice",
        replayed(5),
        &retry.outcome,
    )?;
    let now = w.generation(&s)?;
    s.state(A, now, 8)
}

/// L7.6: the token comes from the lock, not from the lease. The late
/// worker's process starts first (its lease is the older one) but takes the
/// lock second; both act, each with a generation above the last.
pub fn token_comes_from_the_lock(o: &dyn Observer, w: &mut World<'_>) -> Result<(), Halt> {
    let s = Stage::new(o, "L7.6", &w.lab);
    let start = w.generation(&s)?;

    // The late worker's process starts first: its lease is the older one.
    let mut late = w.worker(&s, "late", Role::Yours, job("late", 3), &[Moment::Started])?;
    reached(
        &s,
        late.wait_at(Moment::Started),
        "the late worker, started",
    )?;
    let late_lease = reached(&s, late.lease(), "the late worker's lease")?;
    s.say(
        "late",
        "starts first: its lease is the older one; it waits before taking the lock",
    );

    // The early worker leases second but takes the lock first.
    let mut early = w.worker(&s, "early", Role::Yours, job("early", 5), &[])?;
    let early_lease = reached(&s, early.lease(), "the early worker's lease")?;
    if early_lease <= late_lease {
        return Err(s.not_checked(
            "lease the late worker first",
            format!("the cluster granted lease {early_lease:x} after {late_lease:x}, not above it"),
        ));
    }
    let report = reached(&s, early.finish(), "the early worker: its job (+5)")?;
    let after_early = w.generation(&s)?;
    s.say(
        "early",
        format_args!(
            "leases second, takes the lock first: its job (+5) -> {}; fund-A has generation {after_early}",
            report.outcome
        ),
    );
    s.same(
        "the early worker: its job (+5)",
        applied(5),
        &report.outcome,
    )?;
    if after_early <= start {
        s.fail(
            "the early worker, the first holder",
            format!("a generation above {start} installed"),
            format!("generation {after_early}"),
        )?;
    }

    // The late worker, with the older lease, takes the lock now.
    reached(&s, late.go(), "let the late worker go on")?;
    let report = reached(&s, late.finish(), "the late worker: its job (+3)")?;
    let after_late = w.generation(&s)?;
    s.say(
        "late",
        format_args!(
            "takes the lock second: its job (+3) -> {}; fund-A has generation {after_late}",
            report.outcome
        ),
    );
    s.same(
        "the late worker (older lease, newer lock): its job (+3)",
        applied(8),
        &report.outcome,
    )?;
    if after_late <= after_early {
        s.fail(
            "the late worker, the second holder",
            format!("a generation above {after_early} installed"),
            format!("generation {after_late}"),
        )?;
    }
    Ok(())
}
