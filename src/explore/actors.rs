//! The workers, the authority and the paths their calls take: what one
//! schedule runs, on connections the exploration reuses.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::commits::{Clock, Effects, Installed};
use super::enumerate::Chooser;
use super::invariants::{Invariant, Violation, check};
use super::requests::{Call, Route, WORKERS};
use super::{CONTENTION_RETRIES, RESOURCE, Setup};
use crate::checkpoint::{Checkpoint, Trace};
use crate::claims::facts::Event;
use crate::db::{self, STARTING_GENERATIONS};
use crate::{Lab, LabConnection, LabError, Session, describe, describe_error};

/// What the top of a schedule and the checkpoint hooks share.
struct Shared {
    /// The choices of this schedule.
    chooser: Chooser,
    /// The authority's connection; an install may run inside a worker's hook.
    authority: RefCell<LabConnection>,
    /// The schedule so far, as text.
    steps: RefCell<Vec<String>>,
    /// The generation installed now, as the authority's answers say (the
    /// workers' commit hooks read it too).
    installed: Installed,
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
        self.chooser.choose(options)
    }

    fn install_pending(&self) -> bool {
        self.next_generation.get() <= self.last_generation
    }

    /// The authority tries its next install. Returns `true` when it met
    /// contention and should try again; a second attempt (`again`) that meets
    /// contention is unanswered.
    fn install(&self, indent: &str, again: bool) -> bool {
        let generation = self.next_generation.get();
        let result = self
            .authority
            .borrow_mut()
            .install_generation(RESOURCE, generation);
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

/// The connections of an exploration, reused by every schedule.
pub(super) struct Run {
    route: Route,
    workers: [LabConnection; 2],
    /// What each worker's connection committed, as its hooks report it.
    effects: [Effects; 2],
    /// The order of commits and returns.
    clock: Clock,
    shared: Rc<Shared>,
    /// The lab's events, begun again with each schedule.
    trace: Trace,
}

impl Run {
    /// Three connections to `lab` (two workers, the authority) for the
    /// schedules of `setup`, which ask `chooser` at every choice.
    pub(super) fn new(lab: &Lab, setup: Setup, chooser: Chooser) -> Result<Run, LabError> {
        let shared = Rc::new(Shared {
            chooser,
            authority: RefCell::new(lab.connect()?),
            steps: RefCell::new(Vec::new()),
            installed: Installed::new(1),
            next_generation: Cell::new(2),
            last_generation: setup.last_generation,
            unanswered: RefCell::new(Vec::new()),
            paused: Cell::new(false),
            unfinished: Cell::new(false),
        });
        let workers = [lab.connect()?, lab.connect()?];
        let trace = lab.trace().clone();
        if let Some(actor) = shared.authority.borrow().actor() {
            trace.name(actor, "authority");
        }
        for (worker, who) in workers.iter().zip(WORKERS) {
            if let Some(actor) = worker.actor() {
                trace.name(actor, who.name);
            }
        }
        let clock = Clock::default();
        let traced = |w: usize| workers[w].actor().map(|actor| (trace.clone(), actor));
        let effects = [
            Effects::watch(
                workers[0].connection(),
                &clock,
                &shared.installed,
                traced(0),
            ),
            Effects::watch(
                workers[1].connection(),
                &clock,
                &shared.installed,
                traced(1),
            ),
        ];
        Ok(Run {
            route: setup.route,
            workers,
            effects,
            clock,
            shared,
            trace,
        })
    }

    /// What the lab's connections did in the last schedule, and what the
    /// exploration calls them.
    pub(super) fn events(&self) -> (Vec<Event>, Vec<(usize, String)>) {
        self.trace.run()
    }

    /// Whether the last schedule tried an install while a worker's call
    /// was paused.
    pub(super) fn paused(&self) -> bool {
        self.shared.paused.get()
    }

    /// Whether a call met an exercise that is still a stub.
    pub(super) fn unfinished(&self) -> bool {
        self.shared.unfinished.get()
    }

    /// The last schedule's steps, as text; empties them for the next.
    pub(super) fn take_steps(&self) -> Vec<String> {
        self.shared.steps.take()
    }

    /// Runs one schedule from the first state and returns what it broke.
    pub(super) fn schedule(&mut self) -> Result<Vec<Violation>, LabError> {
        let shared = Rc::clone(&self.shared);
        db::restart(shared.authority.borrow().connection())?;
        self.trace.restart(&STARTING_GENERATIONS);
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
        check(
            self.route,
            &WORKERS,
            &calls,
            state.value,
            &records,
            &mut violations,
        );
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
        self.effects[w].start();
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
            committed: self.effects[w].committed(),
            returned: self.clock.tick(),
        };
        if blocked.get() {
            self.shared.install("", true);
        }
        call
    }
}
