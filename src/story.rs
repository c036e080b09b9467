//! The lab's story, lesson by lesson: each claim acted out on a fresh lab by
//! the worker, the authority and an observer, and written to a
//! [`Transcript`]. `cargo run` prints it; the tests snapshot it.
//!
//! The story runs whichever implementation is compiled in. When it meets a
//! function that is still a stub, it says so and stops that lesson.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use crate::checkpoint::{self, Checkpoint};
use crate::claims::{self, Lesson};
use crate::counterexample;
use crate::explore::{self, Invariant, Route, Setup};
use crate::transcript::{Halt, Transcript, records_line};
use crate::{ExternalApi, Journal, Lab, LabError, Session, Store, describe, describe_error};

const A: &str = "fund-A";
const B: &str = "fund-B";

/// One lesson's scenario.
pub type Scenario = fn(&Transcript) -> Result<(), Halt>;

/// The lessons with their scenarios, in order.
pub const SCENARIOS: [(Lesson, Scenario); 6] = [
    (claims::LESSONS[0], l1_authority_can_become_stale),
    (claims::LESSONS[1], l2_explicit_contract),
    (claims::LESSONS[2], l3_decision_in_transaction),
    (claims::LESSONS[3], l4_duplicates),
    (claims::LESSONS[4], l5_counterexamples),
    (claims::LESSONS[5], l6_bad_input),
];

/// The PostgreSQL chapter (feature `postgres`), told after the six lessons.
#[cfg(feature = "postgres")]
pub const POSTGRES: (Lesson, Scenario) = (
    Lesson {
        id: "PG",
        title: "The same contract on a PostgreSQL server",
    },
    postgres_server,
);

/// Runs one lesson into `transcript`; a halt becomes the lesson's last line.
/// Returns whether the lesson ran to its end.
pub fn run_lesson(
    transcript: &Transcript,
    lesson: &Lesson,
    scenario: impl FnOnce(&Transcript) -> Result<(), Halt>,
) -> bool {
    transcript.lesson(lesson);
    match scenario(transcript) {
        Ok(()) => true,
        Err(halt) => {
            transcript.note(format_args!("stopped: {halt}"));
            false
        }
    }
}

/// The whole lab, all six lessons (and the PostgreSQL chapter with the
/// feature `postgres`, the etcd chapter with the feature `etcd`), each on a
/// transcript of its own handed to `told` as soon as the lesson ends, so a
/// reader sees each lesson as it finishes. Returns whether every lesson ran
/// to its end. The etcd chapter starts its workers as processes of the
/// running program, which must call [`crate::etcd::serve_if_worker`] first
/// thing (`lab` does).
pub fn run_all(mut told: impl FnMut(&Transcript)) -> bool {
    let mut complete = true;
    let mut tell = |lesson: &Lesson, scenario: &dyn Fn(&Transcript) -> Result<(), Halt>| {
        let transcript = Transcript::new();
        complete &= run_lesson(&transcript, lesson, scenario);
        told(&transcript);
    };
    for (lesson, scenario) in SCENARIOS {
        tell(&lesson, &scenario);
    }
    #[cfg(feature = "postgres")]
    {
        let (lesson, scenario) = POSTGRES;
        tell(&lesson, &scenario);
    }
    #[cfg(feature = "etcd")]
    {
        let program = || {
            std::process::Command::new(
                std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into()),
            )
        };
        tell(&crate::etcd::story::LESSON, &|t| {
            crate::etcd::story::chapter(t, &program)
        });
    }
    complete
}

/// L1: a worker's decision outlives its authority.
fn l1_authority_can_become_stale(t: &Transcript) -> Result<(), Halt> {
    t.note(
        "A worker checks its authority, pauses, and comes back. Meanwhile the authority moved on.",
    );
    stale_worker(&Scene::new(t, "L1.1", Journal::Rollback)?)?;

    t.note(
        "No pause at all: the install lands in the gap between a check and a write, however short.",
    );
    let s = Scene::new(t, "L1.2", Journal::Rollback)?;
    let mut worker = s.connect()?;
    let hook_scene = s.clone();
    worker.on_checkpoint(move |checkpoint| {
        if checkpoint == Checkpoint::WorkerChecked {
            let mut authority = hook_scene.lab.connect()?;
            hook_scene.say("", "(between the worker's check and its write)");
            // A halt inside the hook cannot stop the lesson; the line says it.
            let _ = hook_scene.install("authority", &mut authority, A, 2);
        }
        Ok(())
    });
    let written = counterexample::unfenced_write(&mut worker, A, 1, 5);
    s.say(
        "worker A",
        format_args!(
            "worker-side check: held 1 = installed 1, then write +5 with no generation -> {}",
            describe(&written)
        ),
    );
    s.observe(A)?;
    s.say(
        "",
        "the stale write got through: value 5 under generation 2",
    );
    worker.clear_checkpoint();
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.say(
        "",
        "the same worker through apply: the destination refuses it",
    );
    s.observe(A)?;

    every_interleaving(t)
}

/// L1.1 on any destination: a worker reads generation 1 and pauses, the
/// authority installs 2, the worker comes back with 1.
fn stale_worker<S: Store>(s: &Scene<S>) -> Result<(), Halt> {
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    let held = s.lab.state(A)?.generation;
    s.say(
        "worker A",
        format_args!("reads {A}: generation {held}, then pauses"),
    );
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker A", &mut worker, A, held, "r1", 5)?;
    s.observe(A)
}

/// L1.3: the same story in every order, through apply and through the
/// worker-side check (see [`explore`]).
fn every_interleaving(t: &Transcript) -> Result<(), Halt> {
    t.note(
        "Every order of it: two workers (each reads its generation, asks once, retries once) and the \
         authority (installs 2, also while a worker's call is paused at a checkpoint).",
    );
    let say = |role: &str, text: String| t.line("L1.3", role, text);
    for route in [Route::Apply, Route::WorkerSideCheck] {
        let found = explore::explore(Setup::new(route))?;
        let summary = format!("{route}: {} schedules", found.schedules);
        // Through apply, the first schedule that broke anything; through
        // the worker-side check, the plainest that let a stale write in.
        let shown = match route {
            Route::Apply => found.first_broken().and_then(|schedule| {
                let first = schedule.violations.first()?;
                Some((first.invariant, schedule))
            }),
            Route::WorkerSideCheck => found
                .example(Invariant::Fenced)
                .map(|schedule| (Invariant::Fenced, schedule)),
        };
        match shown {
            None if found.held == found.schedules => say(
                "explorer",
                format!(
                    "{summary}, every one kept the invariants ({})",
                    Invariant::ALL.map(|i| i.to_string()).join(", ")
                ),
            ),
            None => say(
                "explorer",
                format!("{summary}, {} kept the invariants", found.held),
            ),
            Some((invariant, schedule)) => {
                say(
                    "explorer",
                    format!(
                        "{summary}, {} broke \"{invariant}\"; schedule {}:",
                        found.breaks(invariant),
                        schedule.number
                    ),
                );
                for step in schedule.numbered_steps() {
                    say("", step);
                }
                for violation in &schedule.violations {
                    say("", format!("broken: {violation}"));
                }
            }
        }
        if route == Route::WorkerSideCheck && found.breaks(Invariant::AtMostOnce) > 0 {
            say(
                "",
                format!(
                    "and with no request id, a retry writes again: {} schedules broke \"{}\"",
                    found.breaks(Invariant::AtMostOnce),
                    Invariant::AtMostOnce
                ),
            );
        }
    }
    Ok(())
}

/// L2: the destination's contract, one resource at a time.
fn l2_explicit_contract(t: &Transcript) -> Result<(), Halt> {
    t.note("Each resource has its own installed generation; only that exact number is accepted.");
    let s = Scene::new(t, "L2.1", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.install("authority", &mut authority, A, 2)?;
    s.observe(B)?;
    s.apply("worker B", &mut worker, B, 1, "r1", 3)?;

    let s = Scene::new(t, "L2.2", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker X", &mut worker, A, 3, "r1", 1)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 1)?;
    s.observe(A)?;

    let s = Scene::new(t, "L2.3", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;

    let s = Scene::new(t, "L2.4", Journal::Rollback)?;
    let mut authority = s.connect()?;
    s.install("authority", &mut authority, A, 2)?;
    s.install("authority", &mut authority, A, 2)?;
    s.install("authority", &mut authority, A, 1)?;
    s.observe(A)?;

    let s = Scene::new(t, "L2.5", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.apply("worker A", &mut worker, "fund-C", 1, "r1", 5)?;
    s.install("authority", &mut authority, "fund-C", 2)?;
    s.say(
        "observer",
        format_args!("resources: {}", s.lab.resource_names()?.join(", ")),
    );

    t.note(
        "Granted is not installed: the authority must install a generation before it hands it out.",
    );
    let s = Scene::new(t, "L2.6", Journal::Rollback)?;
    let (mut old, mut new, mut authority) = (s.connect()?, s.connect()?, s.connect()?);
    s.say(
        "authority",
        "grants generation 2 to worker B, but has not installed it yet",
    );
    s.apply("worker B", &mut new, A, 2, "b1", 10)?;
    s.apply("worker A", &mut old, A, 1, "a1", 1)?;
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker B", &mut new, A, 2, "b1", 10)?;
    s.apply("worker A", &mut old, A, 1, "a2", 1)?;
    s.observe(A)
}

/// L3: the check and the effect share one transaction that holds the lock.
fn l3_decision_in_transaction(t: &Transcript) -> Result<(), Halt> {
    t.note("The destination takes the write lock before it reads the generation, and keeps it until it commits.");
    let s = Scene::new(t, "L3.1", Journal::Rollback)?;
    let mut worker = s.connect()?;
    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (holds the write lock)");
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;

    paused_apply(t, "L3.2", Journal::Rollback)?;

    let s = Scene::new(t, "L3.3", Journal::Rollback)?;
    let mut authority = s.connect()?;
    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (holds the write lock)");
    s.install("authority", &mut authority, A, 2)?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    let hook_scene = s.clone();
    authority.on_checkpoint(move |checkpoint| {
        if checkpoint == Checkpoint::BeforeInstall {
            hook_scene.say("", "(install paused between its read and its write)");
            hook_scene.probe();
        }
        Ok(())
    });
    s.install("authority", &mut authority, A, 2)?;
    s.observe(A)?;

    t.note("The same story with the file in WAL mode: readers no longer block the writer, but there is still one writer.");
    paused_apply(t, "L3.4", Journal::Wal)
}

/// Apply paused between validation and effect, in `journal` mode: a plain
/// BEGIN IMMEDIATE and an install on other connections both meet the lock.
fn paused_apply(t: &Transcript, claim: &'static str, journal: Journal) -> Result<(), Halt> {
    let s = Scene::new(t, claim, journal)?;
    s.say(
        "observer",
        format_args!("journal mode: {}", s.lab.journal_mode_in_file()?),
    );
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    // Connected before the pause: while apply holds the lock, a new
    // connection could not always even read the schema.
    let mut hook_authority = s.connect()?;
    let hook_scene = s.clone();
    worker.on_checkpoint(move |checkpoint| {
        if checkpoint == Checkpoint::BeforeEffect {
            hook_scene.say("", "(apply paused between validation and effect)");
            hook_scene.probe();
            let _ = hook_scene.install("authority", &mut hook_authority, A, 2);
        }
        Ok(())
    });
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.install("authority", &mut authority, A, 2)?;
    s.observe(A)
}

/// L4: the generation says who may act, not whether the act already happened.
fn l4_duplicates(t: &Transcript) -> Result<(), Halt> {
    t.note("A current holder can still send the same intent twice; the record keyed by request id remembers it.");
    let s = Scene::new(t, "L4.1", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;

    let s = Scene::new(t, "L4.2", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    s.apply("worker A", &mut worker, A, 1, "r2", 5)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    s.say(
        "",
        "the replay answers 7, what r1 returned; to learn the value now, read it",
    );
    s.observe(A)?;

    let s = Scene::new(t, "L4.3", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 9)?;
    s.observe(A)?;

    let s = Scene::new(t, "L4.4", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    s.apply("worker B", &mut worker, B, 1, "r1", 7)?;
    s.observe(B)?;

    let s = Scene::new(t, "L4.5", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 1)?;
    s.apply("worker A", &mut worker, A, 1, "r2", 2)?;
    s.observe(A)?;

    t.note("A worker whose response was lost retries after losing authority: it learns it is stale, not the old result.");
    let s = Scene::new(t, "L4.6", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.say("", "(the response is lost on its way back)");
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;

    let s = Scene::new(t, "L4.7", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker B", &mut worker, A, 2, "r1", 5)?;
    s.observe(A)?;

    let s = Scene::new(t, "L4.8", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker A", &mut worker, A, 1, "r8", 5)?;
    s.apply("worker X", &mut worker, A, 3, "r9", 5)?;
    s.apply("worker B", &mut worker, A, 2, "r1", 5)?;
    s.apply("worker B", &mut worker, A, 2, "r1", 6)?;
    s.observe(A)?;

    t.note("The response is lost, but the authority has not moved: the retry learns what its own request did.");
    let s = Scene::new(t, "L4.9", Journal::Rollback)?;
    let (mut a, mut b) = (s.connect()?, s.connect()?);
    s.apply("worker A", &mut a, A, 1, "a-1", 5)?;
    s.say("", "(the response is lost on its way back to worker A)");
    s.apply("worker B", &mut b, A, 1, "b-1", 3)?;
    s.apply("worker A", &mut a, A, 1, "a-1", 5)?;
    s.observe(A)?;

    t.note("Worker A's answer is slow, so it resends r1 on a second connection while the first is still inside apply.");
    let s = Scene::new(t, "L4.10", Journal::Wal)?;
    let mut first = s.connect()?;
    let again = Rc::new(RefCell::new(s.connect()?));
    let (hook_scene, hook_again) = (s.clone(), Rc::clone(&again));
    let mut paused = false;
    first.on_checkpoint(move |checkpoint| {
        if checkpoint == Checkpoint::RecordRead && !paused {
            paused = true;
            hook_scene.say(
                "",
                "(worker A's apply paused after the record was looked up)",
            );
            let again = &mut *hook_again.borrow_mut();
            let _ = hook_scene.apply("resend", again, A, 1, "r1", 5);
        }
        Ok(())
    });
    s.apply("worker A", &mut first, A, 1, "r1", 5)?;
    s.apply("resend", &mut *again.borrow_mut(), A, 1, "r1", 5)?;
    s.observe(A)?;
    for journal in [Journal::Wal, Journal::Rollback] {
        let found = explore::explore_duplicates(journal)?;
        let summary = format!(
            "the same two deliveries, the second at every checkpoint of the first ({journal}): \
             {} schedules",
            found.schedules
        );
        match found.first_broken() {
            None => s.say(
                "explorer",
                format!("{summary}, every one answered and applied once"),
            ),
            Some(schedule) => {
                s.say(
                    "explorer",
                    format!("{summary}; schedule {}:", schedule.number),
                );
                for step in schedule.numbered_steps() {
                    s.say("", step);
                }
                for violation in &schedule.violations {
                    s.say("", format!("broken: {violation}"));
                }
            }
        }
    }

    t.note("The request id is opaque: an id that differs in any way is another request.");
    let s = Scene::new(t, "L4.11", Journal::Rollback)?;
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "order-7", 7)?;
    s.apply("worker A", &mut worker, A, 1, "Order-7", 7)?;
    s.apply("worker A", &mut worker, A, 1, "order-70", 7)?;
    s.apply("worker A", &mut worker, A, 1, "order-7", 7)?;
    s.observe(A)
}

/// L5: what the contract does not cover, shown rather than hidden.
fn l5_counterexamples(t: &Transcript) -> Result<(), Halt> {
    t.note("A fault between the value and the record: the local transaction rolls both back.");
    let s = Scene::new(t, "L5.1", Journal::Rollback)?;
    let mut worker = s.connect()?;
    worker.on_checkpoint(checkpoint::between_writes(true, || {}));
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;
    worker.clear_checkpoint();
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;

    t.note("An external call is outside the transaction: the rollback cannot take it back.");
    let s = Scene::new(t, "L5.2", Journal::Rollback)?;
    let mut worker = s.connect()?;
    let api = ExternalApi::new();
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(true, move || {
        ledger.call("pay 5 for r1")
    }));
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;
    s.say(
        "external",
        format_args!("ledger: {}", api.calls().join("; ")),
    );
    let ledger = api.clone();
    worker.on_checkpoint(checkpoint::between_writes(false, move || {
        ledger.call("pay 5 for r1")
    }));
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;
    s.say(
        "external",
        format_args!("ledger: {}", api.calls().join("; ")),
    );
    s.say("", "one request in the database, two payments outside it");

    t.note("A write that does not go through apply is not checked by it.");
    let s = Scene::new(t, "L5.3", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    counterexample::direct_sql_write(&s.lab, A, 100)?;
    s.say(
        "operator",
        "UPDATE resources SET value = 100 (direct SQL, no generation)",
    );
    s.observe(A)?;

    t.note("A bad recovery puts an old generation back; apply trusts whatever is installed.");
    let s = Scene::new(t, "L5.4", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.install("authority", &mut authority, A, 2)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    counterexample::restore_generation(&s.lab, A, 1)?;
    s.say("operator", "restores generation 1 from an old backup");
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.apply("worker B", &mut worker, A, 2, "r2", 5)?;
    s.observe(A)?;

    t.note("Closing every connection and opening the file again keeps what was committed. This is not a crash or power-loss test.");
    let s = Scene::new(t, "L5.5", Journal::Rollback)?;
    {
        let (mut worker, mut authority) = (s.connect()?, s.connect()?);
        s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
        s.install("authority", &mut authority, A, 2)?;
    }
    s.say("", "(every connection closed; the file is opened again)");
    let mut worker = s.connect()?;
    s.observe(A)?;
    s.apply("worker B", &mut worker, A, 2, "r1", 5)
}

/// L6: anything a caller can send gets an answer that names the problem.
fn l6_bad_input(t: &Transcript) -> Result<(), Halt> {
    t.note("Bad input is refused with a typed error and leaves everything as it was.");
    let s = Scene::new(t, "L6.1", Journal::Rollback)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.apply("worker A", &mut worker, A, 1, "r1", i64::MAX - 1)?;
    s.apply("worker A", &mut worker, A, 1, "r2", 2)?;
    s.apply("worker A", &mut worker, A, 1, "", 1)?;
    s.apply("worker A", &mut worker, A, 0, "r3", 1)?;
    s.apply("worker A", &mut worker, "fund-A' OR '1'='1", 1, "r4", 1)?;
    s.install("authority", &mut authority, A, 0)?;
    s.install("authority", &mut authority, A, -1)?;
    s.observe(A)
}

/// The PostgreSQL chapter: the stale worker again, then what the row lock
/// changes, on a private server (see [`crate::pg`]).
#[cfg(feature = "postgres")]
fn postgres_server(t: &Transcript) -> Result<(), Halt> {
    use crate::pg::PgLab;

    t.note("The destination is now a schema on a PostgreSQL server, reached over TCP; the code is exercises/postgres/.");
    stale_worker(&Scene::on(t, "L1.1", PgLab::new()?))?;

    t.note("apply locks the resource's row (SELECT ... FOR UPDATE NOWAIT) before it reads the generation.");
    let s = Scene::on(t, "L3.2", PgLab::new()?);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    let hook = s.clone();
    worker.on_checkpoint(move |checkpoint| {
        if checkpoint == Checkpoint::GenerationRead {
            hook.say(
                "",
                format_args!("(apply on {A} paused after reading the generation)"),
            );
            hook.probe_row(A);
            let mut authority = hook.lab.connect()?;
            let _ = hook.install("authority", &mut authority, A, 2);
            // The lock is the row's: fund-B is free.
            let b = Scene {
                claim: "L3.7",
                ..hook.clone()
            };
            b.probe_row(B);
            let _ = b.install("authority", &mut authority, B, 2);
            let mut other = b.lab.connect()?;
            let _ = b.apply("worker B", &mut other, B, 2, "b1", 3);
        }
        Ok(())
    });
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.install("authority", &mut authority, A, 2)?;
    s.observe(A)?;
    s.observe(B)?;

    t.note("SQLite, for contrast: one connection's BEGIN IMMEDIATE is the lock on the whole file, whichever fund the next writer wants.");
    let s = Scene::new(t, "L3.7", Journal::Rollback)?;
    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (to change fund-A)");
    s.probe();
    holder.release()?;

    t.note("Contention is immediate and typed: SQLSTATE 55P03 (lock not available), never a verdict on the generation.");
    let s = Scene::on(t, "L3.1", PgLab::new()?);
    let mut worker = s.connect()?;
    let holder = s.lab.hold_row_lock(A)?;
    s.say(
        "other",
        format_args!("SELECT ... FOR UPDATE on {A} (holds its row)"),
    );
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.apply("worker A", &mut worker, B, 1, "r1", 5)?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    s.apply("worker A", &mut worker, A, 1, "r1", 5)?;
    s.observe(A)?;

    t.note(
        "The record still removes duplicates, and a direct UPDATE still goes around the contract.",
    );
    let s = Scene::on(t, "L4.2", PgLab::new()?);
    let mut worker = s.connect()?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    s.apply("worker A", &mut worker, A, 1, "r2", 5)?;
    s.apply("worker A", &mut worker, A, 1, "r1", 7)?;
    let s = Scene { claim: "L5.3", ..s };
    let mut authority = s.connect()?;
    s.install("authority", &mut authority, A, 2)?;
    s.lab.direct_sql_write(A, 100)?;
    s.say(
        "operator",
        "UPDATE resources SET value = 100 (direct SQL, no generation)",
    );
    s.observe(A)?;
    t.note("Workers in separate processes, each with its own TCP connection, are L1.4's test (tests/lab/postgres/processes.rs).");
    Ok(())
}

#[cfg(feature = "postgres")]
impl Scene<crate::pg::PgLab> {
    /// `SELECT ... FOR UPDATE NOWAIT` on a session of its own: is the row
    /// free right now?
    fn probe_row(&self, resource: &str) {
        let probe = match self.lab.probe_row_lock(resource) {
            Ok(()) => "acquired the row lock".to_owned(),
            Err(error) => describe_error(&error),
        };
        self.say(
            "probe",
            format_args!("SELECT ... FOR UPDATE NOWAIT on {resource} -> {probe}"),
        );
    }
}

/// A fresh lab for one claim, and the transcript it writes to. Clones share
/// both, so a checkpoint hook can narrate too.
#[derive(Clone)]
struct Scene<S: Store = Lab> {
    lab: S,
    transcript: Transcript,
    claim: &'static str,
}

impl Scene {
    fn new(transcript: &Transcript, claim: &'static str, journal: Journal) -> Result<Scene, Halt> {
        Ok(Scene::on(transcript, claim, Lab::new(journal)?))
    }

    /// A plain `BEGIN IMMEDIATE` on a connection of its own: is the write
    /// lock free right now?
    fn probe(&self) {
        let probe = match self.lab.probe_write_lock() {
            Ok(()) => "acquired the write lock".to_owned(),
            Err(error) => describe_error(&error),
        };
        self.say("probe", format_args!("BEGIN IMMEDIATE -> {probe}"));
    }
}

impl<S: Store> Scene<S> {
    /// A scene on a lab of any destination.
    fn on(transcript: &Transcript, claim: &'static str, lab: S) -> Scene<S> {
        Scene {
            lab,
            transcript: transcript.clone(),
            claim,
        }
    }

    fn connect(&self) -> Result<S::Session, Halt> {
        Ok(self.lab.connect()?)
    }

    fn say(&self, role: &str, text: impl fmt::Display) {
        self.transcript.line(self.claim, role, text);
    }

    fn install(
        &self,
        who: &str,
        db: &mut impl Session,
        resource: &str,
        generation: i64,
    ) -> Result<(), Halt> {
        let result = db.install_generation(resource, generation);
        self.say(
            who,
            format_args!(
                "install_generation({resource}, {generation}) -> {}",
                match &result {
                    Ok(()) => "installed".to_owned(),
                    Err(error) => describe_error(error),
                }
            ),
        );
        settle(result)
    }

    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        who: &str,
        db: &mut impl Session,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<(), Halt> {
        let result = db.apply(resource, generation, request_id, delta);
        self.say(
            who,
            format_args!(
                "apply({resource}, generation {generation}, {request_id:?}, {delta:+}) -> {}",
                describe(&result)
            ),
        );
        settle(result)
    }

    fn observe(&self, resource: &str) -> Result<(), Halt> {
        let state = self.lab.state(resource)?;
        let records = self.lab.records(resource)?;
        let records = records_line(&records);
        self.say("observer", format_args!("{resource}: {state}; {records}"));
        Ok(())
    }
}

/// An unfinished or panicking exercise stops the lesson; any other result is
/// part of the story, already told.
fn settle<T>(result: Result<T, LabError>) -> Result<(), Halt> {
    match result {
        Err(error @ (LabError::NotImplemented { .. } | LabError::Panicked { .. })) => {
            Err(Halt(error.to_string()))
        }
        _ => Ok(()),
    }
}
