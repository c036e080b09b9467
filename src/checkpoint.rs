//! Checkpoints: the places where a test may pause the destination or make it
//! fail.
//!
//! A race made with `sleep` happens sometimes; a race made with a checkpoint
//! happens every time. A checkpoint is reached by what the code does to the
//! database, not by which function it calls: on SQLite every statement of a
//! worker's or authority's connection is watched ([`crate::watch`]), on
//! PostgreSQL every write (`crate::pg`), so a correct solution that writes
//! with its own SQL pauses where the reference does. While the hook runs, the destination is paused exactly there, with
//! whatever locks it holds; the hook may act on other connections and then
//! let it go on (`Ok(())`) or inject a fault (`Err(..)`).
//!
//! One mechanism serves both destinations: [`Hooks`] holds a connection's
//! hook and decides when it runs; each destination only reports what its
//! statements reached (PostgreSQL from triggers that wait in the server and
//! from its transaction's read methods, see `crate::pg`).
//!
//! Two things a test can rely on, whoever wrote the code under test:
//!
//! - A write checkpoint fires inside the write statement, before the row
//!   changes; the statement holds the write lock by then, whatever the
//!   transaction. A test that looks for a lock taken too late pauses after a
//!   read ([`Checkpoint::GenerationRead`]).
//! - A checkpoint may fire more than once in a call (code that reads the
//!   generation twice); a test acts on the occurrence it needs.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};

use fencing_lab_api::LabError;
use lab_claims::facts::{Answer, Call, Event};

pub use lab_claims::facts::{Checkpoint, Trace};

/// What a test runs at a checkpoint: act on other connections, then return
/// `Ok(())` to let the destination go on or an error to inject a fault.
pub type Hook = Box<dyn FnMut(Checkpoint) -> Result<(), LabError>>;

/// One connection's checkpoint machinery, the same for every destination:
/// the test's hook, the checkpoints a finished statement left to fire, and
/// what a hook raised that could not stop the statement it ran in.
///
/// How a destination learns that a checkpoint was reached is its own
/// business (SQLite: temporary triggers and a statement trace, see
/// [`crate::db`]; PostgreSQL: triggers that wait in the server, and its
/// transaction's read methods). What happens then is this type's, for both.
#[derive(Default)]
pub(crate) struct Hooks {
    /// The test's hook; `None` outside tests that pause.
    hook: RefCell<Option<Hook>>,
    /// Checkpoints reached at the end of a statement (a read), fired when
    /// the connection's next statement starts: "after the read" is "before
    /// anything else happens on this connection".
    pending: RefCell<Vec<Checkpoint>>,
    /// A hook's panic, or its error at a read checkpoint (a read cannot be
    /// failed after it happened), handed over when the call returns.
    deferred: RefCell<Option<Deferred>>,
    /// Why the current (or last) call could not be fully observed: code
    /// that took a route the destination's checkpoints do not see.
    unobserved: Cell<Option<&'static str>>,
    /// Whether a call of the code under test is running on this connection
    /// (see [`Hooks::in_call`]).
    in_call: Cell<bool>,
    /// Whether the connection's last statement started inside a
    /// transaction (see [`Hooks::statement_starts`]).
    in_transaction: Cell<bool>,
    /// The lab's events this connection adds to, and its number there.
    trace: RefCell<Option<(Trace, usize)>>,
}

/// What a hook raised where it could not be raised at once.
enum Deferred {
    /// The hook returned an error at a checkpoint that cannot fail.
    Error(LabError),
    /// The hook panicked (a test's own assertion): resumed when the call
    /// returns, so it fails the test as itself, never as the learner's.
    Panic(Box<dyn Any + Send>),
}

impl Hooks {
    /// Installs `hook`.
    pub(crate) fn set(&self, hook: Hook) {
        *self.hook.borrow_mut() = Some(hook);
    }

    /// Removes the hook.
    pub(crate) fn clear(&self) {
        *self.hook.borrow_mut() = None;
    }

    /// Whether a hook is installed: without one, no checkpoint can pause
    /// or fail anything.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn is_set(&self) -> bool {
        self.hook.borrow().is_some()
    }

    /// A checkpoint the code under test reached where it can still be
    /// stopped: before a write, or in the harness's own code. Fires what
    /// the previous statement left pending first, then `checkpoint`; an
    /// error from the hook is the fault to inject.
    pub(crate) fn reached(&self, checkpoint: Checkpoint) -> Result<(), LabError> {
        self.flush();
        self.run(checkpoint)
    }

    /// A statement that reads `checkpoints`' data has started: they fire
    /// once it is over, when the next statement starts ([`Hooks::flush`]).
    pub(crate) fn after_statement(&self, checkpoints: impl IntoIterator<Item = Checkpoint>) {
        self.pending.borrow_mut().extend(checkpoints);
    }

    /// Fires every pending checkpoint. A read cannot be undone, so an error
    /// from the hook here is kept and returned when the call returns.
    pub(crate) fn flush(&self) {
        let pending: Vec<Checkpoint> = self.pending.borrow_mut().drain(..).collect();
        for checkpoint in pending {
            if let Err(error) = self.run(checkpoint) {
                self.defer(Deferred::Error(error));
            }
        }
    }

    /// A statement starts on this connection, inside a transaction or not
    /// (`in_transaction`), and will read `reads`. What the previous
    /// statement read fires now; so does [`Checkpoint::TransactionEnded`]
    /// when the previous statement started inside a transaction and this
    /// one does not (that statement ended it: a `COMMIT`, a `ROLLBACK`, or
    /// a failure that rolled it back). SQLite's statement trace calls it.
    pub(crate) fn statement_starts(
        &self,
        in_transaction: bool,
        reads: impl IntoIterator<Item = Checkpoint>,
    ) {
        self.flush();
        if self.in_transaction.replace(in_transaction) && !in_transaction {
            self.after_statement([Checkpoint::TransactionEnded]);
            self.flush();
        }
        self.after_statement(reads);
    }

    /// Whether a call run by [`Hooks::around`] is under way: the SQLite
    /// connection's authorizer holds the statements prepared meanwhile to
    /// its policy (`crate::watch`), and lets the harness's own through.
    pub(crate) fn in_call(&self) -> bool {
        self.in_call.get()
    }

    /// Adds this connection's calls and checkpoints to `trace`; returns
    /// its number there.
    pub(crate) fn trace_into(&self, trace: &Trace) -> usize {
        let actor = trace.join();
        *self.trace.borrow_mut() = Some((trace.clone(), actor));
        actor
    }

    /// This connection's number in its lab's events, if it is traced.
    pub(crate) fn actor(&self) -> Option<usize> {
        self.trace.borrow().as_ref().map(|(_, actor)| *actor)
    }

    /// The lab's events this connection adds to, and its number there.
    pub(crate) fn tracer(&self) -> Option<(Trace, usize)> {
        self.trace.borrow().clone()
    }

    /// Runs `call` of the code under test (`run`, which runs it inside
    /// [`Hooks::around`] or the destination's equivalent), and adds it and
    /// its answer (`answer` tells it) to the lab's events.
    pub(crate) fn call<T>(
        &self,
        call: Call,
        answer: impl FnOnce(&Result<T, LabError>) -> Answer,
        run: impl FnOnce() -> Result<T, LabError>,
    ) -> Result<T, LabError> {
        let traced = self.trace.borrow().clone();
        if let Some((trace, actor)) = &traced {
            trace.record(Event::Called {
                actor: *actor,
                call,
            });
        }
        let result = run();
        if let Some((trace, actor)) = &traced {
            trace.record(Event::Answered {
                actor: *actor,
                answer: answer(&result),
            });
        }
        result
    }

    /// Runs one call of the learner's code (or the harness's) on this
    /// connection: starts from a clean slate ([`Checkpoint::CallStarted`]),
    /// then resumes a hook's panic or returns a deferred error instead of
    /// the call's result.
    ///
    /// A read that was the call's last statement fires nothing: once the
    /// call has returned, "after the read" is simply "after the call", which
    /// a test (or the explorer) reaches by acting after it returns.
    pub(crate) fn around<T>(
        &self,
        call: impl FnOnce() -> Result<T, LabError>,
    ) -> Result<T, LabError> {
        self.pending.borrow_mut().clear();
        self.deferred.borrow_mut().take();
        self.unobserved.set(None);
        fencing_lab_api::fault::forget();
        self.in_transaction.set(false);
        let outer = self.in_call.replace(true);
        let result = self.run(Checkpoint::CallStarted).and_then(|()| call());
        self.in_call.set(outer);
        self.pending.borrow_mut().clear();
        match self.deferred.borrow_mut().take() {
            None => result,
            Some(Deferred::Error(error)) => Err(error),
            Some(Deferred::Panic(payload)) => panic::resume_unwind(payload),
        }
    }

    /// Notes that the call took a route no checkpoint sees (`why` says
    /// which, and what a test could not do there).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn note_unobserved(&self, why: &'static str) {
        self.unobserved.set(Some(why));
    }

    /// What [`Hooks::note_unobserved`] noted during the last call.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn unobserved(&self) -> Option<&'static str> {
        self.unobserved.get()
    }

    /// Runs the hook at `checkpoint`. A panic is caught (it may be on its
    /// way out through SQLite's C code) and resumed by [`Hooks::around`];
    /// the statement is stopped with an error meanwhile.
    fn run(&self, checkpoint: Checkpoint) -> Result<(), LabError> {
        let traced = self.trace.borrow().clone();
        // Only inside a call of the code under test: a statement of the
        // harness's own on this connection is not the learner's.
        let told = self.in_call.get() && checkpoint != Checkpoint::CallStarted;
        if let (Some((trace, actor)), true) = (&traced, told) {
            trace.record(Event::Reached {
                actor: *actor,
                at: checkpoint,
            });
        }
        let mut hook = self.hook.borrow_mut();
        let Some(hook) = hook.as_mut() else {
            return Ok(());
        };
        let mark = traced.as_ref().map(|(trace, _)| trace.mark());
        let result = match panic::catch_unwind(AssertUnwindSafe(|| hook(checkpoint))) {
            Ok(result) => result,
            Err(payload) => {
                self.defer(Deferred::Panic(payload));
                Err(LabError::InjectedFault("the test's hook panicked"))
            }
        };
        if let (Some((trace, actor)), Some(mark)) = (&traced, mark) {
            trace.resumed(*actor, mark);
        }
        result
    }

    /// Keeps the first thing deferred: a panic wins over an error.
    fn defer(&self, what: Deferred) {
        let mut deferred = self.deferred.borrow_mut();
        if deferred.is_none() || matches!(what, Deferred::Panic(_)) {
            *deferred = Some(what);
        }
    }
}

/// Where the fault of the rollback claims falls, as its error says.
pub const BETWEEN_WRITES: &str = "between the value and the record";

/// The hook of the rollback claims. In each call of `apply` it runs
/// `at_first_write` just before the first of the two writes, the value and the record, and, with `fault`, injects
/// [`LabError::InjectedFault`] just before the second, whichever order the
/// code writes them in. So the fault always falls between the effect and its
/// record, and a correct `apply` that records first is judged the same as
/// one that writes the value first.
pub fn between_writes(
    fault: bool,
    at_first_write: impl FnMut() + 'static,
) -> impl FnMut(Checkpoint) -> Result<(), LabError> + 'static {
    on_writes(at_first_write, move || match fault {
        true => Err(LabError::InjectedFault(BETWEEN_WRITES)),
        false => Ok(()),
    })
}

/// The mechanism under [`between_writes`]: in each call (counted from
/// [`Checkpoint::CallStarted`]), runs `at_first` just before the first of its two
/// writes and `at_second` just before the second, whichever order they come
/// in. The crash test's child aborts in `at_second`.
pub fn on_writes(
    mut at_first: impl FnMut() + 'static,
    mut at_second: impl FnMut() -> Result<(), LabError> + 'static,
) -> impl FnMut(Checkpoint) -> Result<(), LabError> + 'static {
    let mut writes = 0;
    move |checkpoint| {
        match checkpoint {
            Checkpoint::CallStarted => writes = 0,
            Checkpoint::BeforeEffect | Checkpoint::BeforeRecord => {
                writes += 1;
                match writes {
                    1 => at_first(),
                    2 => return at_second(),
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}
