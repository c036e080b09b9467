//! Every interleaving of the stale-authority story, run for real.
//!
//! Three actors share `fund-A`. Each of two workers reads its generation as
//! an observer, asks the destination once with that generation, its own
//! request id and delta, and at the end retries the same request once (its
//! answer might have been lost). The authority installs generation 2, and 3
//! if the [`Setup`] asks for it. The explorer runs every order of those
//! steps, and in every order it also lets the authority try its next install
//! while a worker's call is paused at one of the checkpoints that call
//! reaches: after the generation was read, before the effect, before the
//! record ([`Route::Apply`]), or after the worker's own check
//! ([`Route::WorkerSideCheck`]). Each schedule runs on real connections to a
//! real SQLite file and is then held against the [`Invariant`]s.
//!
//! **Contention is not an answer.** An install tried while `apply` is paused
//! meets the write lock that `apply` holds. The schedule then goes on as a
//! real authority that retries on contention would see it: the paused call
//! finishes, and the install is tried again right after it returns. A worker
//! refused by contention tries again at once (it held nothing, so nothing
//! else needs to move first).
//!
//! **How the schedules are enumerated.** Depth first, by running them. Each
//! time a schedule has a choice (which actor moves next; whether the install
//! happens at this checkpoint), the explorer takes the first untried option
//! and notes how many there were. The next run repeats the same choices up to
//! the last one that still has an untried option, and takes that. So every
//! schedule is an execution that happened, and a choice exists only where
//! the implementation reached it: a rejected apply never reaches "before the
//! effect", so no schedule pauses it there. The number of schedules therefore
//! depends on the code under test, as it should.
//!
//! **One file per exploration.** Each exploration creates one fresh [`Lab`]
//! and three connections (two workers, the
//! authority); before each schedule the file is put back to its first state
//! (both resources at generation 1, value 0, no records) in one transaction.
//! A new file and three new connections for every schedule would start
//! from the same state but cost five times as much or more: creating and
//! removing the file, and SQLite reading the schema and preparing every
//! statement again on each new connection.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use crate::checkpoint::Checkpoint;
use crate::db::{self, Record};
use crate::{
    Destination, Journal, Lab, LabError, Outcome, counterexample, describe, describe_error,
};

/// The resource every schedule works on.
pub const RESOURCE: &str = "fund-A";

/// A backstop against an implementation that does not behave the same way
/// twice (the enumeration assumes it does): far above any real count.
const MAX_SCHEDULES: usize = 100_000;

/// How many times a worker refused by contention tries again at once.
const CONTENTION_RETRIES: usize = 2;

/// The two workers: a name, a request id and a delta each. The deltas differ
/// by an order of magnitude so a value says who was applied.
const WORKERS: [Worker; 2] = [
    Worker {
        name: "worker 1",
        request_id: "r1",
        delta: 1,
    },
    Worker {
        name: "worker 2",
        request_id: "r2",
        delta: 10,
    },
];

/// One worker's fixed part.
struct Worker {
    /// How the schedule names it.
    name: &'static str,
    /// The request id of its one request.
    request_id: &'static str,
    /// The change it asks for.
    delta: i64,
}

/// Which path the workers' requests take to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// [`crate::apply`]: the destination checks the generation in the
    /// transaction that writes.
    Apply,
    /// [`counterexample::unfenced_write`]: the worker checks, then writes a
    /// delta that carries no generation and no request id.
    WorkerSideCheck,
}

impl Route {
    /// Sends `worker`'s request with `generation` along this route.
    fn call(
        self,
        db: &mut Destination,
        generation: i64,
        worker: &Worker,
    ) -> Result<Outcome, LabError> {
        match self {
            Route::Apply => crate::apply(db, RESOURCE, generation, worker.request_id, worker.delta),
            Route::WorkerSideCheck => {
                counterexample::unfenced_write(db, RESOURCE, generation, worker.delta)
                    .map(|result| Outcome::Applied { result })
            }
        }
    }

    /// The request as a schedule step shows it.
    fn describe(self, generation: i64, worker: &Worker) -> String {
        match self {
            Route::Apply => format!(
                "apply({RESOURCE}, generation {generation}, {:?}, {:+})",
                worker.request_id, worker.delta
            ),
            Route::WorkerSideCheck => format!(
                "checks generation {generation}, then writes {:+} with no generation",
                worker.delta
            ),
        }
    }

    /// Whether the destination keeps a record per request on this route.
    fn keeps_records(self) -> bool {
        self == Route::Apply
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Route::Apply => "apply",
            Route::WorkerSideCheck => "worker-side check",
        })
    }
}

/// What to explore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// The path the workers' requests take.
    pub route: Route,
    /// The journal mode of the file.
    pub journal: Journal,
    /// The authority installs 2, 3, ... up to this generation, in order.
    pub last_generation: i64,
}

impl Setup {
    /// The story's exploration: the file in WAL mode, one install
    /// (generation 2).
    ///
    /// WAL, because there a reader never holds a writer off, so an install
    /// is stopped only by a write lock the code under test took on purpose:
    /// the rollback journal would also stop it at a plain read, and hide a
    /// generation read outside the writing transaction.
    pub fn new(route: Route) -> Setup {
        Setup {
            route,
            journal: Journal::Wal,
            last_generation: 2,
        }
    }
}

/// What must hold after every schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// No effect commits under a generation other than the one installed at
    /// that moment, and every record carries that generation.
    Fenced,
    /// Each request is applied at most once, and its record says what apply
    /// returned.
    AtMostOnce,
    /// The final value is the sum of the accepted deltas.
    Sum,
    /// A retry of an applied request returns the original result (or is
    /// refused as stale), never a second effect.
    Replay,
    /// Every call is answered: applied, replayed or stale for a worker,
    /// installed for the authority. Contention is tried again, not an
    /// answer; "stale" must be true.
    Answered,
}

impl Invariant {
    /// All of them, in the order they are reported.
    pub const ALL: [Invariant; 5] = [
        Invariant::Fenced,
        Invariant::AtMostOnce,
        Invariant::Sum,
        Invariant::Replay,
        Invariant::Answered,
    ];

    /// The rule in one line.
    pub fn rule(self) -> &'static str {
        match self {
            Invariant::Fenced => {
                "every effect commits under the generation installed at that moment"
            }
            Invariant::AtMostOnce => {
                "each request is applied at most once, and recorded as applied"
            }
            Invariant::Sum => "the final value is the sum of the accepted deltas",
            Invariant::Replay => {
                "a retry of an applied request returns its original result, or is refused as stale"
            }
            Invariant::Answered => {
                "every call is answered: applied, replayed or truly stale; every install lands"
            }
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Invariant::Fenced => "fenced",
            Invariant::AtMostOnce => "at most once",
            Invariant::Sum => "sum",
            Invariant::Replay => "replay",
            Invariant::Answered => "answered",
        })
    }
}

/// One invariant broken by one schedule, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant.
    pub invariant: Invariant,
    /// What happened, with the numbers.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

/// One schedule that broke at least one invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Its place in the exploration, from 1.
    pub number: usize,
    /// What each actor did and what came of it, in order. A step that ran
    /// while a worker's call was paused is indented.
    pub steps: Vec<String>,
    /// Every invariant it broke.
    pub violations: Vec<Violation>,
}

impl Schedule {
    /// The steps, numbered from 1, one a line.
    pub fn numbered_steps(&self) -> Vec<String> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, step)| format!("{:>2}. {step}", i + 1))
            .collect()
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "schedule {}:", self.number)?;
        for step in self.numbered_steps() {
            writeln!(f, "  {step}")?;
        }
        for violation in &self.violations {
            writeln!(f, "  broken: {violation}")?;
        }
        Ok(())
    }
}

/// What an exploration found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// What was explored.
    pub setup: Setup,
    /// How many schedules ran.
    pub schedules: usize,
    /// How many of them kept every invariant.
    pub held: usize,
    /// How many schedules tried an install while a worker's call was
    /// paused: zero would mean no checkpoint was ever reached.
    pub paused: usize,
    /// Whether the exploration stopped after the first schedule that met an
    /// exercise still holding its `todo!()`: every later schedule would
    /// only say so again.
    pub unfinished: bool,
    /// Per broken invariant: how many schedules broke it, and the first of
    /// those with the fewest violations (the plainest example).
    broken: Vec<(Invariant, usize, Schedule)>,
}

impl Exploration {
    /// How many schedules broke `invariant`.
    pub fn breaks(&self, invariant: Invariant) -> usize {
        self.broken
            .iter()
            .find(|(broken, _, _)| *broken == invariant)
            .map_or(0, |(_, count, _)| *count)
    }

    /// The plainest schedule that broke `invariant`, if any did.
    pub fn example(&self, invariant: Invariant) -> Option<&Schedule> {
        self.broken
            .iter()
            .find(|(broken, _, _)| *broken == invariant)
            .map(|(_, _, schedule)| schedule)
    }

    /// The earliest of the examples, if any schedule broke anything.
    pub fn first_broken(&self) -> Option<&Schedule> {
        self.broken
            .iter()
            .map(|(_, _, schedule)| schedule)
            .min_by_key(|schedule| schedule.number)
    }

    /// Counts one schedule and keeps it if it is the best example so far of
    /// an invariant it broke.
    fn tally(&mut self, steps: Vec<String>, violations: Vec<Violation>) {
        self.schedules += 1;
        if violations.is_empty() {
            self.held += 1;
            return;
        }
        let schedule = Schedule {
            number: self.schedules,
            steps,
            violations,
        };
        for invariant in Invariant::ALL {
            if !schedule.violations.iter().any(|v| v.invariant == invariant) {
                continue;
            }
            match self
                .broken
                .iter_mut()
                .find(|(broken, _, _)| *broken == invariant)
            {
                Some((_, count, example)) => {
                    *count += 1;
                    if schedule.violations.len() < example.violations.len() {
                        *example = schedule.clone();
                    }
                }
                None => self.broken.push((invariant, 1, schedule.clone())),
            }
        }
        self.broken.sort_by_key(|(invariant, _, _)| *invariant);
    }
}

/// Explorations already run in this process, one slot per setup.
type Done = Vec<(Setup, Arc<Mutex<Option<Exploration>>>)>;
static DONE: Mutex<Done> = Mutex::new(Vec::new());

/// Runs every schedule of `setup` and checks each.
///
/// The result is remembered for the rest of the process: the same setup
/// against the same compiled code finds the same schedules every time, and
/// both the story and the tests ask for it, so the second asker gets a copy
/// (a concurrent one waits for the first to finish).
///
/// Errors are the harness's own (the file cannot be created or put back);
/// whatever the code under test answers is part of a schedule.
pub fn explore(setup: Setup) -> Result<Exploration, LabError> {
    let slot = {
        let mut done = DONE.lock().unwrap_or_else(PoisonError::into_inner);
        match done.iter().find(|(explored, _)| *explored == setup) {
            Some((_, slot)) => Arc::clone(slot),
            None => {
                let slot = Arc::new(Mutex::new(None));
                done.push((setup, Arc::clone(&slot)));
                slot
            }
        }
    };
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = slot.as_ref() {
        return Ok(found.clone());
    }
    let found = explore_now(setup)?;
    *slot = Some(found.clone());
    Ok(found)
}

/// Runs the exploration (see [`explore`]).
fn explore_now(setup: Setup) -> Result<Exploration, LabError> {
    let lab = Lab::new(setup.journal)?;
    let shared = Rc::new(Shared {
        choices: RefCell::new(Choices::default()),
        authority: RefCell::new(lab.connect()?),
        steps: RefCell::new(Vec::new()),
        installed: Cell::new(1),
        next_generation: Cell::new(2),
        last_generation: setup.last_generation,
        unanswered: RefCell::new(Vec::new()),
        paused: Cell::new(false),
        unfinished: Cell::new(false),
    });
    let mut run = Run {
        route: setup.route,
        workers: [lab.connect()?, lab.connect()?],
        shared: Rc::clone(&shared),
    };
    let mut exploration = Exploration {
        setup,
        schedules: 0,
        held: 0,
        paused: 0,
        unfinished: false,
        broken: Vec::new(),
    };
    let mut replay = Vec::new();
    loop {
        *shared.choices.borrow_mut() = Choices {
            replay,
            made: Vec::new(),
        };
        let violations = run.schedule()?;
        exploration.paused += usize::from(shared.paused.get());
        exploration.unfinished = shared.unfinished.get();
        exploration.tally(shared.steps.take(), violations);
        match shared.choices.take().next() {
            Some(next) if exploration.schedules < MAX_SCHEDULES && !shared.unfinished.get() => {
                replay = next;
            }
            _ => break,
        }
    }
    Ok(exploration)
}

/// The choices of one schedule: those to repeat from the previous one, and
/// those made so far, each with how many options it had.
#[derive(Default)]
struct Choices {
    /// The choices to make again, in order; past its end, option 0.
    replay: Vec<usize>,
    /// (choice, number of options) for every choice made in this run.
    made: Vec<(usize, usize)>,
}

impl Choices {
    /// Picks one of `options` (at least one).
    fn choose(&mut self, options: usize) -> usize {
        let choice = self
            .replay
            .get(self.made.len())
            .copied()
            .unwrap_or(0)
            .min(options - 1);
        self.made.push((choice, options));
        choice
    }

    /// The choices of the next schedule in depth-first order: the same up to
    /// the last choice with an untried option, then that option. `None` when
    /// every schedule has run.
    fn next(mut self) -> Option<Vec<usize>> {
        while let Some((choice, options)) = self.made.pop() {
            if choice + 1 < options {
                let mut next: Vec<usize> = self.made.iter().map(|(c, _)| *c).collect();
                next.push(choice + 1);
                return Some(next);
            }
        }
        None
    }
}

/// What the top of a schedule and the checkpoint hooks share.
struct Shared {
    /// The choices of this schedule.
    choices: RefCell<Choices>,
    /// The authority's connection; an install may run inside a worker's hook.
    authority: RefCell<Destination>,
    /// The schedule so far, as text.
    steps: RefCell<Vec<String>>,
    /// The generation installed now, as the authority's answers say.
    installed: Cell<i64>,
    /// The generation the authority installs next.
    next_generation: Cell<i64>,
    /// The last generation it installs.
    last_generation: i64,
    /// Answers that are not answers, for [`Invariant::Answered`].
    unanswered: RefCell<Vec<String>>,
    /// Whether an install was tried while a worker's call was paused.
    paused: Cell<bool>,
    /// Whether a call met an exercise that is still a stub.
    unfinished: Cell<bool>,
}

impl Shared {
    fn step(&self, text: String) {
        self.steps.borrow_mut().push(text);
    }

    fn choose(&self, options: usize) -> usize {
        self.choices.borrow_mut().choose(options)
    }

    fn install_pending(&self) -> bool {
        self.next_generation.get() <= self.last_generation
    }

    /// The authority tries its next install. Returns `true` when it met
    /// contention and should try again; a second attempt (`again`) that meets
    /// contention is unanswered.
    fn install(&self, indent: &str, again: bool) -> bool {
        let generation = self.next_generation.get();
        let result =
            crate::install_generation(&mut self.authority.borrow_mut(), RESOURCE, generation);
        let answer = match &result {
            Ok(()) => "installed".to_owned(),
            Err(error) => describe_error(error),
        };
        let who = if again {
            "authority, again"
        } else {
            "authority"
        };
        self.step(format!(
            "{indent}{who}: install_generation({RESOURCE}, {generation}) -> {answer}"
        ));
        match result {
            Ok(()) => self.installed.set(generation),
            Err(LabError::Contention) if !again => return true,
            Err(error) => {
                self.unfinished
                    .set(self.unfinished.get() || matches!(error, LabError::NotImplemented { .. }));
                self.unanswered.borrow_mut().push(format!(
                    "install_generation({RESOURCE}, {generation}) -> {answer}"
                ));
            }
        }
        self.next_generation.set(generation + 1);
        false
    }
}

/// One worker's call and what came of it.
struct Call {
    /// Index into [`WORKERS`].
    worker: usize,
    /// Whether this was the retry at the end.
    retry: bool,
    /// The generation presented.
    generation: i64,
    /// The destination's answer.
    result: Result<Outcome, LabError>,
    /// The installed generation when the call returned, which is when its
    /// effect (if any) committed.
    installed: i64,
}

/// The connections of an exploration, reused by every schedule.
struct Run {
    route: Route,
    workers: [Destination; 2],
    shared: Rc<Shared>,
}

impl Run {
    /// Runs one schedule from the first state and returns what it broke.
    fn schedule(&mut self) -> Result<Vec<Violation>, LabError> {
        let shared = Rc::clone(&self.shared);
        db::restart(shared.authority.borrow().connection())?;
        shared.installed.set(1);
        shared.next_generation.set(2);
        shared.unanswered.borrow_mut().clear();
        shared.paused.set(false);

        // Each worker: read, call, retry.
        let mut next_step = [0u8; 2];
        let mut held = [0i64; 2];
        let mut calls = Vec::new();
        loop {
            let mut ready = Vec::with_capacity(3);
            ready.extend((0..2).filter(|&w| next_step[w] < 3).map(Some));
            if shared.install_pending() {
                ready.push(None);
            }
            if ready.is_empty() {
                break;
            }
            match ready[shared.choose(ready.len())] {
                None => {
                    if shared.install("", false) {
                        shared.install("", true);
                    }
                }
                Some(w) => {
                    match next_step[w] {
                        0 => {
                            let state = db::read_state(self.workers[w].connection(), RESOURCE)?;
                            held[w] = state.generation;
                            shared.step(format!(
                                "{}: reads {RESOURCE}, generation {}",
                                WORKERS[w].name, state.generation
                            ));
                        }
                        step => calls.push(self.call(w, held[w], step == 2)),
                    }
                    next_step[w] += 1;
                }
            }
        }

        let observer = shared.authority.borrow();
        let state = db::read_state(observer.connection(), RESOURCE)?;
        let records = db::read_records(observer.connection(), RESOURCE)?;
        let mut violations: Vec<Violation> = shared
            .unanswered
            .borrow()
            .iter()
            .map(|detail| Violation {
                invariant: Invariant::Answered,
                detail: detail.clone(),
            })
            .collect();
        if state.generation != shared.installed.get() {
            violations.push(Violation {
                invariant: Invariant::Answered,
                detail: format!(
                    "the file says generation {}, the authority's installs said {}",
                    state.generation,
                    shared.installed.get()
                ),
            });
        }
        check(self.route, &calls, state.value, &records, &mut violations);
        Ok(violations)
    }

    /// Worker `w` sends its request with generation `held`; meanwhile, at
    /// each checkpoint, the authority may try its next install.
    fn call(&mut self, w: usize, held: i64, retry: bool) -> Call {
        let worker = &WORKERS[w];
        let who = if retry {
            format!("{}, retrying", worker.name)
        } else {
            worker.name.to_owned()
        };
        let request = format!("{who}: {}", self.route.describe(held, worker));
        // Whether the authority tried an install during this call, and
        // whether it met contention and must try again after.
        let tried = Rc::new(Cell::new(false));
        let blocked = Rc::new(Cell::new(false));
        {
            let (shared, tried, blocked) = (
                Rc::clone(&self.shared),
                Rc::clone(&tried),
                Rc::clone(&blocked),
            );
            let request = request.clone();
            self.workers[w].on_checkpoint(move |checkpoint| {
                // One install per call at most: an authority that met
                // contention waits for the call to return before it moves.
                if !tried.get()
                    && !matches!(
                        checkpoint,
                        Checkpoint::BeforeInstall | Checkpoint::CallStarted
                    )
                    && shared.install_pending()
                    && shared.choose(2) == 1
                {
                    tried.set(true);
                    shared.paused.set(true);
                    shared.step(format!("{request}: paused {checkpoint}"));
                    blocked.set(shared.install("    ", false));
                }
                Ok(())
            });
        }
        let db = &mut self.workers[w];
        let mut result = self.route.call(db, held, worker);
        for _ in 0..CONTENTION_RETRIES {
            if !matches!(result, Err(LabError::Contention)) {
                break;
            }
            self.shared.step(format!(
                "{request} -> {}, tries again at once",
                describe(&result)
            ));
            result = self.route.call(db, held, worker);
        }
        db.clear_checkpoint();
        if matches!(result, Err(LabError::NotImplemented { .. })) {
            self.shared.unfinished.set(true);
        }
        self.shared
            .step(format!("{request} -> {}", describe(&result)));
        let call = Call {
            worker: w,
            retry,
            generation: held,
            result,
            installed: self.shared.installed.get(),
        };
        if blocked.get() {
            self.shared.install("", true);
        }
        call
    }
}

/// Holds one schedule's calls, final value and records against the
/// invariants; pushes what broke onto `violations`.
fn check(
    route: Route,
    calls: &[Call],
    value: i64,
    records: &[Record],
    violations: &mut Vec<Violation>,
) {
    let mut broke = |invariant, detail: String| violations.push(Violation { invariant, detail });

    for call in calls {
        let worker = &WORKERS[call.worker];
        let what = if call.retry { "retry" } else { "request" };
        match &call.result {
            Ok(_) => {}
            Err(LabError::Stale {
                presented,
                installed,
            }) if *presented == call.generation
                && *installed == call.installed
                && call.generation < call.installed => {}
            Err(error) => broke(
                Invariant::Answered,
                format!("{}'s {what} -> {}", worker.name, describe_error(error)),
            ),
        }
    }

    let mut accepted = 0i64;
    for (w, worker) in WORKERS.iter().enumerate() {
        let mut original: Option<&Call> = None;
        for call in calls.iter().filter(|call| call.worker == w) {
            match call.result {
                Ok(Outcome::Applied { result }) => {
                    accepted = accepted.saturating_add(worker.delta);
                    if call.generation != call.installed {
                        broke(
                            Invariant::Fenced,
                            format!(
                                "{}'s write of {:+} committed while generation {} was installed (it held {})",
                                worker.name, worker.delta, call.installed, call.generation
                            ),
                        );
                    }
                    if original.is_some() {
                        broke(
                            Invariant::AtMostOnce,
                            format!("{}'s {:+} was applied twice", worker.name, worker.delta),
                        );
                        broke(
                            Invariant::Replay,
                            format!(
                                "{}'s retry applied {:+} again (result {result})",
                                worker.name, worker.delta
                            ),
                        );
                    } else {
                        original = Some(call);
                    }
                }
                Ok(Outcome::Replayed { result }) => match original.map(|o| o.result.as_ref()) {
                    Some(Ok(first)) if first.result() == result => {}
                    Some(Ok(first)) => broke(
                        Invariant::Replay,
                        format!(
                            "{}'s retry returned {result}, the original result was {}",
                            worker.name,
                            first.result()
                        ),
                    ),
                    _ => broke(
                        Invariant::Replay,
                        format!(
                            "{}'s {:?} was answered as a replay ({result}) but never applied",
                            worker.name, worker.request_id
                        ),
                    ),
                },
                Err(_) => {}
            }
        }
        if !route.keeps_records() {
            continue;
        }
        let record = records.iter().find(|r| r.request_id == worker.request_id);
        match (original, record) {
            (Some(call), Some(record)) => {
                let result = call.result.as_ref().map_or(0, |o| o.result());
                if record.delta != worker.delta || record.result != result {
                    broke(
                        Invariant::AtMostOnce,
                        format!(
                            "the record of {:?} says delta {:+}, result {}; apply returned {result} for {:+}",
                            worker.request_id, record.delta, record.result, worker.delta
                        ),
                    );
                }
                if record.generation != call.installed {
                    broke(
                        Invariant::Fenced,
                        format!(
                            "the record of {:?} says generation {}, but {} was installed when it committed",
                            worker.request_id, record.generation, call.installed
                        ),
                    );
                }
            }
            (Some(_), None) => broke(
                Invariant::AtMostOnce,
                format!(
                    "{:?} was applied, but no record remembers it",
                    worker.request_id
                ),
            ),
            (None, Some(record)) => broke(
                Invariant::AtMostOnce,
                format!(
                    "a record of {:?} ({:+}) exists, but no apply of it returned applied",
                    record.request_id, record.delta
                ),
            ),
            (None, None) => {}
        }
    }
    if let Some(stray) = records
        .iter()
        .find(|r| WORKERS.iter().all(|w| w.request_id != r.request_id))
    {
        broke(
            Invariant::AtMostOnce,
            format!("a record of {:?} that no worker sent", stray.request_id),
        );
    }

    if value != accepted {
        broke(
            Invariant::Sum,
            format!("the value is {value}, the accepted deltas add up to {accepted}"),
        );
    }
}
