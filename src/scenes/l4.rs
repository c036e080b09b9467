//! L4: authority does not remove duplicates.

use std::cell::RefCell;
use std::rc::Rc;

use super::expect::{INSTALLED, applied, conflict, faulted, never_issued, rec, replayed, stale};
use super::{A, B, Observer, Stage, Step, pause_at};
use crate::checkpoint::{self, Checkpoint};
use crate::explore::{Duplicates, Exploration, Schedule, explore_duplicates};
use crate::transcript::Halt;
use crate::{Journal, Lab, Session, Store, describe};

/// L4.1: the same intent twice: one effect, and the second answer is the
/// first.
pub fn same_intent_twice<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.1", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), replayed(5))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), replayed(5))?;

    s.observe(A, 1, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// L4.2: r1 (+7) returns 7, r2 (+5) takes the value to 12, and replaying
/// r1 still answers 7: the response belongs to the original request.
pub fn replay_returns_the_original<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.2", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 7), applied(7))?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 5), applied(12))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 7), replayed(7))?;
    s.say(
        "",
        "the replay answers 7, what r1 returned; to learn the value now, read it",
    );

    s.observe(A, 1, 12, &[rec(A, "r1", 7, 7, 1), rec(A, "r2", 5, 12, 1)])
}

/// L4.3: the same request id with `other` delta is not a replay: it is
/// refused, and neither the value nor the record moves.
pub fn other_delta_is_a_conflict<S: Store>(
    o: &dyn Observer,
    lab: &S,
    other: i64,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.3", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 7), applied(7))?;
    s.apply(
        "worker A",
        &mut worker,
        (A, 1, "r1", other),
        conflict("r1", 7, other),
    )?;

    s.observe(A, 1, 7, &[rec(A, "r1", 7, 7, 1)])
}

/// L4.4: r1 on fund-A and r1 on fund-B are two requests.
pub fn keyed_by_resource_and_id<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.4", lab);
    let mut worker = s.connect()?;

    // Another delta on fund-B, so that a record keyed by the request id
    // alone shows as a conflict or a replay of fund-A's, not by chance.
    s.apply("worker A", &mut worker, (A, 1, "r1", 7), applied(7))?;
    s.apply("worker B", &mut worker, (B, 1, "r1", 4), applied(4))?;
    s.apply("worker B", &mut worker, (B, 1, "r1", 4), replayed(4))?;
    s.apply(
        "worker B",
        &mut worker,
        (B, 1, "r1", 3),
        conflict("r1", 4, 3),
    )?;

    s.state(A, 1, 7)?;
    s.observe(B, 1, 4, &[rec(B, "r1", 4, 4, 1)])
}

/// L4.5: two different requests under one generation both apply.
pub fn generation_is_not_a_key<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.5", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 1), applied(1))?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 2), applied(3))?;
    s.apply("worker A", &mut worker, (A, 1, "r3", 3), applied(6))?;

    s.tell_state(A)?;
    s.state(A, 1, 6)
}

/// L4.6: the lost response: r1 was applied, the answer never arrived, and
/// by the time the worker retries it lost its authority. It is told
/// "stale", not the stored result: to learn what happened it must read the
/// state.
pub fn late_retry_is_stale<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.6", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.say("", "(the response is lost on its way back)");
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;
    // A conflicting retry is stale first, too.
    s.apply("worker A", &mut worker, (A, 1, "r1", 6), stale(1, 2))?;

    s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// L4.7: presented again under the newer, installed generation, r1 is a
/// replay: the stored result, no second effect.
pub fn replay_under_a_newer_generation<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.7", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker B", &mut worker, (A, 2, "r1", 5), replayed(5))?;
    s.apply("worker B", &mut worker, (A, 2, "r2", 1), applied(6))?;

    s.observe(A, 2, 6, &[rec(A, "r1", 5, 5, 1), rec(A, "r2", 1, 6, 2)])
}

/// How L4.8 refuses or fails a request.
#[derive(Debug, Clone, Copy)]
pub enum Refusal {
    /// Generation 1 after 2 was installed.
    Stale,
    /// Generation 3, never installed.
    NeverIssued,
    /// r0 again, with another delta.
    Conflict,
    /// A fault injected between the value and the record.
    Failed,
}

/// L4.8: a refused or failed apply leaves no record behind.
pub fn refusals_store_nothing<S: Store>(
    o: &dyn Observer,
    lab: &S,
    refusal: Refusal,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.8", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker B", &mut worker, (A, 2, "r0", 5), applied(5))?;
    let (who, request, expected) = match refusal {
        Refusal::Stale => ("worker A", (A, 1, "r1", 5), stale(1, 2)),
        Refusal::NeverIssued => ("worker X", (A, 3, "r1", 5), never_issued(3, 2)),
        Refusal::Conflict => ("worker B", (A, 2, "r0", 6), conflict("r0", 5, 6)),
        Refusal::Failed => {
            worker.on_checkpoint(checkpoint::between_writes(true, || {}));
            ("worker B", (A, 2, "r1", 5), faulted())
        }
    };
    s.apply(who, &mut worker, request, expected)?;

    s.observe(A, 2, 5, &[rec(A, "r0", 5, 5, 2)])
}

/// L4.9: the lost response, end to end: apply commits, the answer never
/// reaches worker A, worker B moves the value on, and A retries. A learns
/// what its own request did, and the value counts it once.
pub fn lost_response_retry_is_a_replay<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.9", lab);
    let (mut a, mut b) = (s.connect()?, s.connect()?);
    let mut authority = s.connect()?;

    // A's request commits; its response is lost on the way back (the
    // scene still reads it, so that a call that failed says so here).
    let lost = describe(&a.apply(A, 1, "a-1", 5));
    s.say(
        "worker A",
        format_args!("apply(fund-A, generation 1, \"a-1\", +5) -> {lost}"),
    );
    s.say("", "(the response is lost on its way back to worker A)");
    s.same(
        "apply(fund-A, generation 1, \"a-1\", +5), whose response is then lost",
        applied(5),
        lost,
    )?;
    s.state(A, 1, 5)?;
    // Meanwhile B's request lands.
    s.apply("worker B", &mut b, (A, 1, "b-1", 3), applied(8))?;
    // A retries the same intent with the same id.
    s.apply("worker A", &mut a, (A, 1, "a-1", 5), replayed(5))?;
    s.observe(A, 1, 8, &[rec(A, "a-1", 5, 5, 1), rec(A, "b-1", 3, 8, 1)])?;

    // Had A waited until the authority moved on, it would learn only that it
    // is stale (L4.6) and must read the state instead.
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut a, (A, 1, "a-1", 5), stale(1, 2))?;
    s.state(A, 2, 8)
}

/// L4.10: worker 1 sends r1 (+1) and, its answer slow, sends it again on a
/// second connection. Whichever delivery comes first is paused at each
/// checkpoint its apply reaches while the other runs to its end; a delivery
/// refused by contention tries again. In every schedule each delivery gets
/// the original result, applied or replayed, never another error; the
/// value moves once and one record says so. Explored in `journal` mode.
pub fn the_same_request_at_once(
    o: &dyn Observer,
    journal: Journal,
) -> Result<Exploration<Duplicates>, Halt> {
    const CLAIM: &str = "L4.10";
    let found = explore_duplicates(journal)?;
    let summary = format!(
        "the same two deliveries, the second at every checkpoint of the first ({journal}): \
         {} schedules",
        found.schedules
    );
    match found.first_broken() {
        None => o.line(
            CLAIM,
            "explorer",
            &format!("{summary}, every one answered and applied once"),
        ),
        Some(schedule) => {
            o.line(
                CLAIM,
                "explorer",
                &format!("{summary}; schedule {}:", schedule.number),
            );
            for step in schedule.numbered_steps() {
                o.line(CLAIM, "", &step);
            }
            for violation in &schedule.violations {
                o.line(CLAIM, "", &format!("broken: {violation}"));
            }
        }
    }
    if let Some(schedule) = found.first_broken() {
        let rules: Vec<String> = schedule
            .broken()
            .iter()
            .map(|&i| format!("{i}: {}", Duplicates::rule(i)))
            .collect();
        let got: Vec<String> = schedule.violations.iter().map(|v| v.to_string()).collect();
        o.check(
            CLAIM,
            Step::failed(told(&found, schedule), rules.join("; "), got.join("; "))
                .schedule(&schedule.events),
        )?;
    }
    // An exploration that never paused a delivery would prove little.
    let paused = "some schedules run the duplicate while the first delivery is paused";
    o.check(
        CLAIM,
        Step::compared(
            format!("{} schedules ({journal})", found.schedules),
            paused,
            if found.paused > 0 {
                paused
            } else {
                "no schedule reached a checkpoint of apply"
            },
        ),
    )?;
    Ok(found)
}

/// L4.10, one schedule of [`the_same_request_at_once`] told step by step:
/// worker A's apply is paused after it looked the record up, and the resend
/// on a second connection meets its lock; once the first commits, the
/// resend is a replay. Its checks are the outcome every schedule must reach:
/// the request applied once.
pub fn a_resend_while_the_first_is_paused(o: &dyn Observer, lab: &Lab) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.10", lab);
    let mut first = s.connect()?;
    let again = Rc::new(RefCell::new(s.connect()?));
    s.say("", "one of those schedules, step by step:");
    let (paused, hook_again) = (s.paused(), Rc::clone(&again));
    pause_at(&mut first, Checkpoint::RecordRead, move || {
        paused.say(
            "",
            "(worker A's apply paused after the record was looked up)",
        );
        let again = &mut *hook_again.borrow_mut();
        let resent = describe(&again.apply(A, 1, "r1", 5));
        paused.say(
            "resend",
            format_args!("apply(fund-A, generation 1, \"r1\", +5) -> {resent}"),
        );
        Ok(())
    });
    // Told, not checked: which of the two deliveries applies and which
    // replays is the exploration's to judge, not this one schedule's.
    let answered = describe(&first.apply(A, 1, "r1", 5));
    s.say(
        "worker A",
        format_args!("apply(fund-A, generation 1, \"r1\", +5) -> {answered}"),
    );
    s.apply(
        "resend",
        &mut *again.borrow_mut(),
        (A, 1, "r1", 5),
        replayed(5),
    )?;
    s.observe(A, 1, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// Where in the exploration a schedule sits, and its steps, one a line.
fn told(found: &Exploration<Duplicates>, schedule: &Schedule) -> String {
    schedule.told(found.schedules, found.setup, found.unfinished)
}

/// L4.11: the request id is opaque: two ids that differ in any way, even
/// one a person would call the same, are two requests, each applied once
/// and each replayed with its own result; each record keeps its id byte
/// for byte.
pub fn ids_are_opaque<S: Store>(
    o: &dyn Observer,
    lab: &S,
    first: &str,
    second: &str,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L4.11", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, first, 7), applied(7))?;
    s.apply("worker A", &mut worker, (A, 1, second, 7), applied(14))?;
    s.apply("worker A", &mut worker, (A, 1, second, 7), replayed(14))?;
    s.apply("worker A", &mut worker, (A, 1, first, 7), replayed(7))?;

    s.tell_state(A)?;
    s.state(A, 1, 14)?;
    // Each id as it was sent, quoted so that a space or a control
    // character shows.
    let mut expected = [
        format!("{first:?} result 7"),
        format!("{second:?} result 14"),
    ];
    expected.sort();
    let mut got: Vec<String> = s
        .lab
        .records(A)?
        .iter()
        .map(|r| format!("{:?} result {}", r.request_id, r.result))
        .collect();
    got.sort();
    s.same(
        format_args!("records of {A}, ids byte for byte"),
        expected.join("; "),
        got.join("; "),
    )?;
    // An id run as SQL may have reached what it was never sent to.
    s.state(B, 1, 0)?;
    s.records(B, &[])
}
