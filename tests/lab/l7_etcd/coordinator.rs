//! L7.1, L7.2, L7.4-L7.6 on the shared cluster: a frozen holder, the
//! counterexample that trusts the lock, a holder that finds a newer
//! generation, a lost response, and where the token comes from.

use fencing_lab::etcd::{Missed, Moment, Role, serve_if_worker};

use super::{Expect, World, claim, job};
use crate::support::*;

/// What the frozen schedule came to.
struct Frozen {
    /// The generation installed when worker 1 was frozen.
    before: i64,
    /// The generation worker 2 left installed.
    after: i64,
    /// Worker 1's report, once woken.
    first: fencing_lab::etcd::Report,
}

/// Worker 1 runs `role` up to `at` and is frozen there (SIGSTOP); its lease
/// is revoked, standing for a lease that ran out while it could not keep
/// it alive; worker 2, same role, takes the lock and does its job (+3);
/// worker 1 is woken (SIGCONT) and finishes its job (+5).
fn frozen_schedule(c: &Check, w: &mut World, role: Role, at: Moment) -> Frozen {
    frozen_schedule_if_reached(c, w, role, at, false)
        .unwrap_or_else(|| unreachable!("a missed moment fails the test"))
}

/// [`frozen_schedule`], for a moment a correct worker need not reach (a
/// read of the generation): a worker that finishes without reaching it
/// must have done its job (+5) like any other; then there is no schedule.
fn frozen_schedule_if_reached(
    c: &Check,
    w: &mut World,
    role: Role,
    at: Moment,
    optional: bool,
) -> Option<Frozen> {
    let mut first = w.worker(c, role, job("w1", 5), &[at]);
    loop {
        match first.wait_at(at) {
            // A worker that reads the generation before it takes the lock
            // is frozen at a read it makes holding the lock, if any.
            Ok(()) if optional && first.revisions().is_empty() => {
                first.go().or_fail(c, "let worker 1 go on to take the lock");
            }
            other => break handle_missed(c, w, at, optional, other)?,
        }
    }
    let before = w.generation(c);
    first.freeze().or_fail(c, "freeze worker 1 (SIGSTOP)");
    c.same("worker 1's process, frozen", "T", first.kernel_state());
    // The line waits in the pipe: a frozen process cannot read it.
    first.go().or_fail(c, "tell worker 1 to go on");
    w.expire_holder(c);

    let second = w.worker(c, role, job("w2", 3), &[]).finish();
    let second = second.or_fail(c, "worker 2: take the lock, install, apply(+3)");
    c.same(
        "worker 2, the new holder: its job (+3)",
        applied(3),
        &second.outcome,
    );
    let after = w.generation(c);

    first.thaw().or_fail(c, "wake worker 1 (SIGCONT)");
    let first = first
        .finish()
        .or_fail(c, "worker 1, woken: the rest of its job");
    Some(Frozen {
        before,
        after,
        first,
    })
}

/// What to do when worker 1 did not stop at `at`: for an optional moment,
/// a worker that finished without it must have done its job (then `None`:
/// no schedule); otherwise the test fails.
fn handle_missed(
    c: &Check,
    w: &World,
    at: Moment,
    optional: bool,
    waited: Result<(), Missed>,
) -> Option<()> {
    match waited {
        Ok(()) => Some(()),
        Err(Missed::Finished(outcome)) if optional => {
            c.same(
                format_args!("worker 1, which never stopped {at} holding the lock: its job (+5)"),
                applied(5),
                outcome,
            );
            let generation = w.generation(c);
            c.state(&w.lab, A, generation, 5);
            None
        }
        Err(missed) => {
            Err::<(), _>(missed).or_fail(c, &format!("worker 1, up to the moment {at}"));
            Some(())
        }
    }
}

/// Frozen at the call of apply, right after the install returned (a
/// worker that reads the generation again after installing would borrow
/// the new holder's), or as it reads the installed generation (a worker
/// that checks its lease, then reads the generation and presents it, is
/// frozen between the two: its check passed, its read finds the new
/// holder's). A worker that never reads the generation is not stopped
/// there, and must simply do its job.
#[rstest::rstest]
#[case::about_to_apply(Moment::Acting)]
#[case::just_installed(Moment::Installed)]
#[case::reading_the_generation(Moment::Reading)]
fn l7_1_frozen_worker_whose_lease_lapsed_is_refused_as_stale_when_it_wakes(#[case] at: Moment) {
    serve_if_worker();
    let c = claim("L7.1");
    let mut w = World::shared(&c);
    let optional = at == Moment::Reading;
    let Some(run) = frozen_schedule_if_reached(&c, &mut w, Role::Yours, at, optional) else {
        return;
    };
    // Frozen at a read, worker 1 may not have installed yet (a worker that
    // reads first): the two checks of its token are the other cases'.
    if !optional && run.before <= 1 {
        c.fail(
            "worker 1, holding the lock, before apply",
            "its token installed: a generation above 1",
            format!("generation {} installed", run.before),
        );
    }
    if !optional && run.after <= run.before {
        c.fail(
            "worker 2, the next holder",
            format!("a generation above worker 1's {}", run.before),
            format!("generation {} installed", run.after),
        );
    }
    // Refused by the destination as stale; or, frozen before it called
    // apply, stopped by the worker itself (a check of its own before
    // acting is no mistake). As in L7.4, judged by what happened: any stop
    // in which apply was never called is a stop, whatever its error
    // (Superseded, a refusal of its own, the lost lease's error).
    let refused = stale(run.before, run.after);
    let stopped_itself = run.first.applies == 0;
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
        let superseded = fencing_lab::describe_error(&fencing_lab::LabError::Superseded {
            token: run.before,
            installed: run.after,
        });
        c.fail(
            "worker 1, woken after worker 2 wrote: apply(+5)",
            format!("{refused} (or a stop before calling apply, such as {superseded})"),
            format!(
                "{}; apply called {} time(s)",
                run.first.outcome, run.first.applies
            ),
        );
    }
    c.state(&w.lab, A, run.after, 3);
    c.records(&w.lab, A, &[rec(A, "w2", 3, 3, run.after)]);
}

#[test]
fn l7_2_a_worker_that_trusts_the_lock_lets_the_woken_write_through_yours_does_not() {
    serve_if_worker();
    let c = claim("L7.2");

    // The counterexample: both workers act with the generation they read.
    let mut trusting = World::shared(&c);
    let run = frozen_schedule(&c, &mut trusting, Role::TrustsTheLock, Moment::Acting);
    c.same(
        "the trusting worker 1, woken after worker 2 wrote: apply(+5)",
        applied(8),
        &run.first.outcome,
    );
    c.state(&trusting.lab, A, 1, 8);

    // Yours, in the same schedule.
    let mut yours = World::shared(&c);
    let run = frozen_schedule(&c, &mut yours, Role::Yours, Moment::Acting);
    if run.first.outcome.starts_with("applied") {
        c.fail(
            "your worker 1, woken after worker 2 wrote: apply(+5)",
            "refused: the destination tells the old holder from the new one",
            &run.first.outcome,
        );
    }
    c.state(&yours.lab, A, run.after, 3);
}

#[test]
fn l7_4_holder_frozen_after_locking_that_finds_a_newer_generation_stops_without_applying() {
    serve_if_worker();
    let c = claim("L7.4");
    let mut w = World::shared(&c);
    let run = frozen_schedule(&c, &mut w, Role::Yours, Moment::Locked);
    // Superseded is what the exercise asks for; passing install's own
    // refusal on, or any error of the worker's own, stops it just as well:
    // judged by what happened, apply never called.
    if run.first.applies != 0 {
        c.fail(
            "worker 1, woken holding a lock that passed on, finds a newer generation installed",
            "it stops (LabError::Superseded) and never calls apply",
            format!(
                "{}; apply called {} time(s)",
                run.first.outcome, run.first.applies
            ),
        );
    }
    c.state(&w.lab, A, run.after, 3);
    c.records(&w.lab, A, &[rec(A, "w2", 3, 3, run.after)]);
}

/// Taking the lock fails: the worker's lease is revoked before the lock is
/// granted (it stands for a lease that ran out while the worker waited).
/// The worker must not act: no lock, no token, no apply. A worker that
/// falls back to the installed generation when the lock fails would write
/// here without holding anything. Then a worker whose lease is alive does
/// its job, as usual.
#[test]
fn l7_4_a_worker_whose_lease_is_lost_before_the_lock_is_granted_never_applies() {
    serve_if_worker();
    let c = claim("L7.4");
    let mut w = World::shared(&c);
    let start = w.generation(&c);

    let mut first = w.worker(&c, Role::Yours, job("w1", 5), &[Moment::Started]);
    first
        .wait_at(Moment::Started)
        .or_fail(&c, "worker 1, started, before taking the lock");
    let lease = first.lease().or_fail(&c, "worker 1's lease");
    w.revoke(&c, lease);
    first
        .go()
        .or_fail(&c, "let worker 1 go on to take the lock");
    let report = first
        .finish()
        .or_fail(&c, "worker 1: its job (+5), its lease revoked");
    if report.applies != 0 || report.outcome.starts_with("applied") {
        c.fail(
            "worker 1, whose lease was revoked before it took the lock: its job (+5)",
            "taking the lock fails, and it stops without calling apply",
            format!(
                "{}; apply called {} time(s)",
                report.outcome, report.applies
            ),
        );
    }
    c.state(&w.lab, A, start, 0);
    c.records(&w.lab, A, &[]);

    // The lock still serves a worker whose lease is alive.
    let second = w.worker(&c, Role::Yours, job("w2", 3), &[]).finish();
    let second = second.or_fail(&c, "worker 2, its lease alive: its job (+3)");
    c.same(
        "worker 2, its lease alive: its job (+3)",
        applied(3),
        &second.outcome,
    );
    let after = w.generation(&c);
    c.records(&w.lab, A, &[rec(A, "w2", 3, 3, after)]);
}

#[test]
fn l7_5_retry_of_a_request_whose_response_was_lost_gets_its_original_result() {
    serve_if_worker();
    let c = claim("L7.5");
    let mut w = World::shared(&c);

    // Worker 1 applies r1 (+5); its process dies before it can report.
    let mut first = w.worker(&c, Role::Yours, job("r1", 5), &[Moment::Returned]);
    first
        .wait_at(Moment::Returned)
        .or_fail(&c, "worker 1: its job (+5), up to its report");
    let after_first = w.generation(&c);
    c.state(&w.lab, A, after_first, 5);
    first
        .kill()
        .or_fail(&c, "kill worker 1 (SIGKILL) before it reports");
    w.expire_holder(&c);

    // The lock passes on: worker 2 applies r2 (+3).
    let second = w.worker(&c, Role::Yours, job("r2", 3), &[]).finish();
    let second = second.or_fail(&c, "worker 2: its job (+3)");
    c.same("worker 2: its job (+3)", applied(8), &second.outcome);

    // The retry of r1, in a new process, under a newer token.
    let retry = w.worker(&c, Role::Yours, job("r1", 5), &[]).finish();
    let retry = retry.or_fail(&c, "worker 1's retry of r1 (+5)");
    c.same(
        "worker 1's retry of r1 (+5), after the lock changed hands twice",
        replayed(5),
        &retry.outcome,
    );
    let now = w.generation(&c);
    c.state(&w.lab, A, now, 8);
}

#[test]
fn l7_6_token_comes_from_the_lock_so_a_worker_that_leased_first_but_locked_second_acts() {
    serve_if_worker();
    let c = claim("L7.6");
    let w = World::shared(&c);
    let start = w.generation(&c);

    // The late worker's process starts first: its lease is the older one.
    let mut late = w.worker(&c, Role::Yours, job("late", 3), &[Moment::Started]);
    late.wait_at(Moment::Started)
        .or_fail(&c, "the late worker, started");
    let late_lease = late.lease().or_fail(&c, "the late worker's lease");

    // The early worker leases second but takes the lock first.
    let mut early = w.worker(&c, Role::Yours, job("early", 5), &[]);
    let early_lease = early.lease().or_fail(&c, "the early worker's lease");
    if early_lease <= late_lease {
        c.not_run(
            "lease the late worker first",
            format!("the cluster granted lease {early_lease:x} after {late_lease:x}, not above it"),
        );
    }
    let report = early.finish().or_fail(&c, "the early worker: its job (+5)");
    c.same(
        "the early worker: its job (+5)",
        applied(5),
        &report.outcome,
    );
    let after_early = w.generation(&c);
    if after_early <= start {
        c.fail(
            "the early worker, the first holder",
            format!("a generation above {start} installed"),
            format!("generation {after_early}"),
        );
    }

    // The late worker, with the older lease, takes the lock now.
    late.go().or_fail(&c, "let the late worker go on");
    let report = late.finish().or_fail(&c, "the late worker: its job (+3)");
    c.same(
        "the late worker (older lease, newer lock): its job (+3)",
        applied(8),
        &report.outcome,
    );
    let after_late = w.generation(&c);
    if after_late <= after_early {
        c.fail(
            "the late worker, the second holder",
            format!("a generation above {after_early} installed"),
            format!("generation {after_late}"),
        );
    }
}
