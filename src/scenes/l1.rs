//! L1: authority can become stale.

use super::expect::{INSTALLED, stale};
use super::{A, Observer, Stage, Step, pause_at};
use crate::checkpoint::Checkpoint;
use crate::explore::{self, Exploration, Invariant, Route, Schedule, Setup};
use crate::transcript::Halt;
use crate::{Session, Store, describe};

/// L1.1: a worker reads generation 1 and pauses; the authority installs 2;
/// the worker comes back with 1 and the destination refuses it.
pub fn stale_worker<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L1.1", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    // The worker checks its authority: generation 1.
    let held = s.lab.state(A)?.generation;
    s.say(
        "worker A",
        format_args!("reads {A}: generation {held}, then pauses"),
    );
    // While it pauses, the authority moves on.
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    // The worker comes back with what it read.
    s.apply("worker A", &mut worker, (A, held, "r1", 5), stale(1, 2))?;
    s.observe(A, 2, 0, &[])
}

/// L1.2: with no pause at all, an install can still land between a
/// worker's own check and its write. The worker-side check lets that stale
/// write through; `apply`, which checks in the transaction that writes,
/// does not.
pub fn install_between_check_and_write<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L1.2", lab);
    let mut worker = s.connect()?;

    // The counterexample: check, then write without a generation. The
    // install lands in the gap between the two statements.
    let (authority_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut worker, Checkpoint::WorkerChecked, move || {
        paused.say("", "(between the worker's check and its write)");
        let installed = authority_lab.connect()?.install_generation(A, 2);
        paused.say(
            "authority",
            format_args!(
                "install_generation({A}, 2) -> {}",
                super::expect::describe_install(&installed)
            ),
        );
        installed
    });
    let written = describe(&worker.unfenced_write(A, 1, 5));
    s.say(
        "worker A",
        format_args!(
            "worker-side check: held 1 = installed 1, then write +5 with no generation -> {written}"
        ),
    );
    s.same(
        "worker-side check, then write +5 (the value it leaves)",
        "5",
        &written,
    )?;
    // The stale write got through under generation 2.
    s.tell_state(A)?;
    s.state(A, 2, 5)?;
    s.say(
        "",
        "the stale write got through: value 5 under generation 2",
    );

    // Through the contract, the same worker is refused.
    worker.clear_checkpoint();
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), stale(1, 2))?;
    s.say(
        "",
        "the same worker through apply: the destination refuses it",
    );
    s.observe(A, 2, 5, &[])
}

/// L1.3: every order of the story, through `route`, in the exploration
/// `setup` (see [`explore`]): each of two workers reads its generation,
/// asks once and retries once; the authority installs, in between and while
/// a call is paused at each checkpoint it reaches.
///
/// Through apply, no schedule may break an invariant, and some schedule
/// must try the install while apply is paused. Through the worker-side
/// check, every install must land, and some schedule must let a stale write
/// in, in the gap between check and write. The story tells a broken
/// schedule: through apply the first (if any), through the worker-side
/// check the plainest that let a stale write in.
pub fn every_interleaving(o: &dyn Observer, setup: Setup) -> Result<Exploration, Halt> {
    let found = explore::explore(setup)?;
    tell_exploration(o, &found);
    match setup.route {
        Route::Apply => judge_apply(o, &found)?,
        Route::WorkerSideCheck => judge_worker_side_check(o, &found)?,
    }
    Ok(found)
}

/// L1.3's claim id, for the explorer's lines and checks.
const EXPLORED: &str = "L1.3";

/// The explorer's lines: how many schedules kept the invariants, and the
/// one broken schedule the story shows, step by step.
fn tell_exploration(o: &dyn Observer, found: &Exploration) {
    let say = |role: &str, text: &str| o.line(EXPLORED, role, text);
    let route = found.setup.route;
    let summary = format!("{route}: {} schedules", found.schedules);
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
            &format!(
                "{summary}, every one kept the invariants ({})",
                Invariant::ALL.map(|i| i.to_string()).join(", ")
            ),
        ),
        None => say(
            "explorer",
            &format!("{summary}, {} kept the invariants", found.held),
        ),
        Some((invariant, schedule)) => {
            say(
                "explorer",
                &format!(
                    "{summary}, {} broke \"{invariant}\"; schedule {}:",
                    found.breaks(invariant),
                    schedule.number
                ),
            );
            for step in schedule.numbered_steps() {
                say("", &step);
            }
            for violation in &schedule.violations {
                say("", &format!("broken: {violation}"));
            }
        }
    }
    if route == Route::WorkerSideCheck && found.breaks(Invariant::AtMostOnce) > 0 {
        say(
            "",
            &format!(
                "and with no request id, a retry writes again: {} schedules broke \"{}\"",
                found.breaks(Invariant::AtMostOnce),
                Invariant::AtMostOnce
            ),
        );
    }
}

/// Through apply: no schedule broke an invariant, and some schedule tried
/// the install while apply was paused.
fn judge_apply(o: &dyn Observer, found: &Exploration) -> Result<(), Halt> {
    if let Some(schedule) = found.first_broken() {
        // Expected: the rules it broke; got: how it broke them.
        let rules: Vec<String> = schedule
            .broken()
            .iter()
            .map(|i| format!("{i}: {}", i.rule()))
            .collect();
        let got: Vec<String> = schedule.violations.iter().map(|v| v.to_string()).collect();
        let step = Step::failed(told(found, schedule), rules.join("; "), got.join("; "))
            .schedule(&schedule.events);
        o.check(EXPLORED, step)?;
    }
    // An exploration that never paused an apply would prove little.
    let paused = "some schedules try the install while apply is paused";
    let got = if found.paused > 0 {
        paused
    } else {
        "no schedule reached a checkpoint of apply"
    };
    let name = format!("{} schedules ({})", found.schedules, found.setup.journal);
    o.check(EXPLORED, Step::compared(name, paused, got))
}

/// Through the worker-side check: every install landed, and some schedule
/// let a stale write in through the gap between check and write.
fn judge_worker_side_check(o: &dyn Observer, found: &Exploration) -> Result<(), Halt> {
    if let Some(schedule) = found.example(Invariant::Answered) {
        let got: Vec<String> = schedule
            .violations
            .iter()
            .filter(|v| v.invariant == Invariant::Answered)
            .map(|v| v.to_string())
            .collect();
        let step = Step::failed(told(found, schedule), "every install lands", got.join("; "));
        o.check(EXPLORED, step)?;
    }
    let Some(schedule) = found.example(Invariant::Fenced) else {
        let name = format!("{} schedules ({})", found.schedules, found.setup.journal);
        let step = Step::failed(
            name,
            "a schedule in which a stale write commits",
            "every schedule kept \"fenced\"".to_owned(),
        );
        return o.check(EXPLORED, step);
    };
    // The stale write got in through the gap between check and write.
    let gap = "the install lands while the worker is paused after its check";
    let paused_after_check = schedule
        .steps
        .iter()
        .any(|step| step.ends_with("paused after the worker's check"));
    let got = if paused_after_check {
        gap
    } else {
        "no pause after the worker's check"
    };
    o.check(EXPLORED, Step::compared(told(found, schedule), gap, got))
}

/// Where in the exploration a schedule sits, and its steps, one a line.
fn told(found: &Exploration, schedule: &Schedule) -> String {
    let setup = format!(
        "{}, the authority installs up to {}",
        found.setup.journal, found.setup.last_generation
    );
    schedule.told(found.schedules, setup, found.unfinished)
}
