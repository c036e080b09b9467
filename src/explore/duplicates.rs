//! Duplicates at the same moment: one request delivered on two connections
//! at once, at every point the checkpoints allow.
//!
//! Worker 1 sends its request (`r1`, +1, generation 1) on one connection;
//! the answer is slow, so it sends the same request again on a second
//! connection while the first is still inside `apply`. Either delivery may
//! reach the destination first. Then, at each checkpoint the first one's
//! `apply` reaches (after the generation was read, after the record was
//! looked up, before the effect, before the record; a checkpoint that fires
//! more than once is a choice each time), the explorer may pause it and run
//! the other delivery's `apply` to its end right there, on its own
//! connection, inside the hook. No thread is needed, and every schedule is
//! an execution that happened, enumerated depth first like the story's
//! (see [`enumerate`](super::enumerate)).
//!
//! **Contention is not an answer.** A delivery refused by contention tries
//! again: the first delivery at once, the other one right after the paused
//! call returns (the lock it met is released then), at most
//! [`CONTENTION_RETRIES`] more times each. What every delivery must end with
//! is the original result, applied or replayed; no other error; and the
//! effect, with its record, exactly once ([`Invariant`](super::Invariant)).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use super::commits::{Clock, Committed, Effects, Installed};
use super::enumerate::{Chooser, DepthFirst};
use super::invariants::{Invariant, Violation, check};
use super::requests::{Call, Route, WORKERS, Worker};
use super::{CONTENTION_RETRIES, Exploration, MAX_SCHEDULES, RESOURCE};
use crate::{Checkpoint, Journal, Lab, LabConnection, LabError, Outcome, Session, db, describe};

/// The one request, sent twice: worker 1's.
const SENDER: &[Worker] = std::slice::from_ref(&WORKERS[0]);

/// The generation both deliveries present: the installed one.
const GENERATION: i64 = 1;

/// How the two deliveries are named in a schedule, by connection.
const NAMES: [&str; 2] = ["worker 1", "worker 1, sending again"];

/// What the duplicate exploration explores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duplicates {
    /// The journal mode of the file.
    pub journal: Journal,
}

impl Duplicates {
    /// What `invariant` asks of two deliveries of one request.
    pub fn rule(invariant: Invariant) -> &'static str {
        match invariant {
            Invariant::Fenced => "the record carries the generation installed when it committed",
            Invariant::AtMostOnce => {
                "the request is applied once, and its record says what apply returned"
            }
            Invariant::Sum => "the value moves by the delta once",
            Invariant::Replay => "the delivery that is not applied gets the original result",
            Invariant::Answered => {
                "each delivery is answered applied or replayed (contention is tried again), \
                 never with another error"
            }
        }
    }
}

impl fmt::Display for Duplicates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one request delivered twice at once, {}", self.journal)
    }
}

/// Runs every schedule of `setup` (see
/// [`explore_duplicates`](super::explore_duplicates)).
///
/// Errors are the harness's own (the file cannot be created or put back);
/// whatever the code under test answers is part of a schedule.
pub(super) fn explore(setup: Duplicates) -> Result<Exploration<Duplicates>, LabError> {
    let lab = Lab::new(setup.journal)?;
    let connections = [
        Rc::new(RefCell::new(lab.connect()?)),
        Rc::new(RefCell::new(lab.connect()?)),
    ];
    let clock = Clock::default();
    let installed = Installed::new(GENERATION);
    let trace = lab.trace().clone();
    for (d, connection) in connections.iter().enumerate() {
        if let Some(actor) = connection.borrow().actor() {
            trace.name(actor, &format!("delivery {}", d + 1));
        }
    }
    let deliveries = [0, 1].map(|d| Delivery {
        effects: Rc::new(Effects::watch(
            connections[d].borrow().connection(),
            &clock,
            &installed,
            connections[d]
                .borrow()
                .actor()
                .map(|actor| (trace.clone(), actor)),
        )),
        clock: clock.clone(),
    });
    let mut schedules = DepthFirst::new();
    let chooser = schedules.chooser();
    let mut exploration = Exploration::new(setup);
    while schedules.next_schedule() {
        trace.restart(&crate::db::STARTING_GENERATIONS);
        let run = schedule(&connections, &deliveries, &chooser)?;
        exploration.paused += usize::from(run.paused);
        exploration.unfinished = run.unfinished;
        exploration.tally(run.steps, run.violations, || trace.run());
        if exploration.schedules >= MAX_SCHEDULES || exploration.unfinished {
            break;
        }
    }
    Ok(exploration)
}

/// What one schedule did and broke.
struct Ran {
    steps: Vec<String>,
    violations: Vec<Violation>,
    /// Whether the other delivery ran while the first was paused.
    paused: bool,
    /// Whether a delivery met an exercise that is still a stub.
    unfinished: bool,
}

/// What one connection's delivery reports besides its answer: when its
/// effect committed, and when it returned.
#[derive(Clone)]
struct Delivery {
    effects: Rc<Effects>,
    clock: Clock,
}

/// A delivery's answer, with when it took effect.
struct Answer {
    result: Result<Outcome, LabError>,
    committed: Option<Committed>,
    returned: u64,
}

impl Delivery {
    /// Runs `deliver` (one delivery, with its retries) and notes when its
    /// effect committed and when it returned.
    fn run(&self, deliver: impl FnOnce() -> Result<Outcome, LabError>) -> Answer {
        self.effects.start();
        let result = deliver();
        Answer {
            result,
            committed: self.effects.committed(),
            returned: self.clock.tick(),
        }
    }
}

/// One delivery's `apply`.
fn deliver(db: &mut LabConnection) -> Result<Outcome, LabError> {
    let sender = &SENDER[0];
    db.apply(RESOURCE, GENERATION, sender.request_id, sender.delta)
}

/// How delivery `d` shows in a step.
fn request(d: usize) -> String {
    format!(
        "{}: {}",
        NAMES[d],
        Route::Apply.describe(GENERATION, &SENDER[0])
    )
}

/// Runs one schedule from the first state.
fn schedule(
    connections: &[Rc<RefCell<LabConnection>>; 2],
    deliveries: &[Delivery; 2],
    chooser: &Chooser,
) -> Result<Ran, LabError> {
    db::restart(connections[0].borrow().connection())?;
    let steps = Rc::new(RefCell::new(Vec::new()));
    let first = chooser.choose(2);
    let other = 1 - first;

    // The other delivery's attempt inside the first one's hook, if the
    // schedule pauses the first one somewhere.
    let inside = pause_first_for_the_other(connections, deliveries, first, chooser, &steps);
    let answer = deliveries[first].run(|| with_retries(&steps, first, &connections[first], false));
    connections[first].borrow_mut().clear_checkpoint();

    let call = |d: usize, answer: Answer| Call {
        worker: 0,
        retry: d == 1,
        generation: GENERATION,
        result: answer.result,
        installed: GENERATION,
        committed: answer.committed,
        returned: answer.returned,
    };
    let mut calls = Vec::with_capacity(2);
    let inside = inside.take();
    let paused = inside.is_some();
    let mut refused = false;
    match inside {
        Some(Answer {
            result: Err(LabError::Contention),
            ..
        }) => refused = true,
        Some(inside) => calls.push(call(other, inside)),
        None => {}
    }
    let answered = !calls.is_empty();
    calls.push(call(first, answer));
    if !answered {
        // Never run, or refused by contention while the first held a lock:
        // it goes now, with the retries it has left.
        let answer =
            deliveries[other].run(|| with_retries(&steps, other, &connections[other], refused));
        calls.push(call(other, answer));
    }
    // In the order they took effect, as the database says: a delivery
    // whose write committed before it paused came first, though the other
    // returned before it.
    calls.sort_by_key(Call::took_effect);

    let unfinished = calls
        .iter()
        .any(|call| matches!(call.result, Err(LabError::NotImplemented { .. })));
    let observer = connections[0].borrow();
    let state = db::read_state(observer.connection(), RESOURCE)?;
    let records = db::read_records(observer.connection(), RESOURCE)?;
    let mut violations = Vec::new();
    check(
        Route::Apply,
        SENDER,
        &calls,
        state.value,
        &records,
        &mut violations,
    );
    Ok(Ran {
        steps: steps.take(),
        violations,
        paused,
        unfinished,
    })
}

/// Arms delivery `first`'s connection so that, at a checkpoint the
/// `chooser` picks (never the call's start: that is the same as sending the
/// duplicate first, which the order already covers), the other delivery
/// runs while it is paused. Its answer, if it ran, lands in the returned
/// cell; what happened goes to `steps`.
fn pause_first_for_the_other(
    connections: &[Rc<RefCell<LabConnection>>; 2],
    deliveries: &[Delivery; 2],
    first: usize,
    chooser: &Chooser,
    steps: &Rc<RefCell<Vec<String>>>,
) -> Rc<RefCell<Option<Answer>>> {
    let other = 1 - first;
    let inside: Rc<RefCell<Option<Answer>>> = Rc::new(RefCell::new(None));
    let tried = Rc::new(Cell::new(false));
    let (chooser, steps, answered) = (chooser.clone(), Rc::clone(steps), Rc::clone(&inside));
    let connection = Rc::clone(&connections[other]);
    let delivery = deliveries[other].clone();
    connections[first]
        .borrow_mut()
        .on_checkpoint(move |checkpoint| {
            if !tried.get() && checkpoint != Checkpoint::CallStarted && chooser.choose(2) == 1 {
                tried.set(true);
                steps
                    .borrow_mut()
                    .push(format!("{}: paused {checkpoint}", request(first)));
                let answer = delivery.run(|| deliver(&mut connection.borrow_mut()));
                steps.borrow_mut().push(format!(
                    "    {} -> {}",
                    request(other),
                    describe(&answer.result)
                ));
                *answered.borrow_mut() = Some(answer);
            }
            Ok(())
        });
    inside
}

/// Delivery `d` on `connection`, tried again at once on contention, at most
/// [`CONTENTION_RETRIES`] times; when it was `refused` already (inside the
/// other's hook), that attempt counts as the first. Every answer goes to
/// `steps`.
fn with_retries(
    steps: &RefCell<Vec<String>>,
    d: usize,
    connection: &RefCell<LabConnection>,
    refused: bool,
) -> Result<Outcome, LabError> {
    let tries = 1 + CONTENTION_RETRIES - usize::from(refused);
    let mut result = deliver(&mut connection.borrow_mut());
    for _ in 1..tries {
        if !matches!(result, Err(LabError::Contention)) {
            break;
        }
        steps.borrow_mut().push(format!(
            "{} -> {}, tries again at once",
            request(d),
            describe(&result)
        ));
        result = deliver(&mut connection.borrow_mut());
    }
    steps
        .borrow_mut()
        .push(format!("{} -> {}", request(d), describe(&result)));
    result
}
