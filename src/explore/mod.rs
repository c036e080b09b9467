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

//!
//! **Duplicates at the same moment.** The same machinery also explores one
//! request delivered twice at once, on two connections
//! ([`explore_duplicates`]): one delivery paused at each checkpoint its
//! `apply` reaches while the other runs to its end.
//!
//! **Where things are.** [`enumerate`] is the depth-first enumerator, on its
//! own and unaware of databases; `actors` holds the workers, the authority
//! and what one schedule runs; `invariants` what must hold ([`Invariant`])
//! and the check of one schedule; `duplicates` the two deliveries of one
//! request; `report` what an exploration found ([`Exploration`]).

pub mod enumerate;

mod actors;
mod commits;
mod duplicates;
mod invariants;
mod report;
mod requests;

use std::sync::{Arc, Mutex, PoisonError};

use crate::{Journal, Lab, LabError};
use actors::Run;
use enumerate::DepthFirst;

pub use duplicates::Duplicates;
pub use invariants::{Invariant, Violation};
pub use report::{Exploration, Schedule};
pub use requests::Route;

/// The resource every schedule works on.
pub const RESOURCE: &str = "fund-A";

/// A backstop against an implementation that does not behave the same way
/// twice (the enumeration assumes it does): far above any real count.
const MAX_SCHEDULES: usize = 100_000;

/// How many times a worker refused by contention tries again at once.
const CONTENTION_RETRIES: usize = 2;

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

/// Explorations already run in this process, one slot per setup.
type Done<S> = Mutex<Vec<(S, Arc<Mutex<Option<Exploration<S>>>>)>>;
static DONE: Done<Setup> = Mutex::new(Vec::new());
static DONE_DUPLICATES: Done<Duplicates> = Mutex::new(Vec::new());

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
    remembered(&DONE, setup, explore_now)
}

/// Runs every schedule of two deliveries of one request on a file in
/// `journal` mode, and checks each; remembered like [`explore`].
pub fn explore_duplicates(journal: Journal) -> Result<Exploration<Duplicates>, LabError> {
    remembered(
        &DONE_DUPLICATES,
        Duplicates { journal },
        duplicates::explore,
    )
}

/// The exploration of `setup` from `done`, or `run` it and keep a copy there.
fn remembered<S: Copy + PartialEq>(
    done: &Done<S>,
    setup: S,
    run: fn(S) -> Result<Exploration<S>, LabError>,
) -> Result<Exploration<S>, LabError> {
    let slot = {
        let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
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
    let found = run(setup)?;
    *slot = Some(found.clone());
    Ok(found)
}

/// Runs the exploration (see [`explore`]).
fn explore_now(setup: Setup) -> Result<Exploration, LabError> {
    let lab = Lab::new(setup.journal)?;
    let mut schedules = DepthFirst::new();
    let mut run = Run::new(&lab, setup, schedules.chooser())?;
    let mut exploration = Exploration::new(setup);
    while schedules.next_schedule() {
        let violations = run.schedule()?;
        exploration.paused += usize::from(run.paused());
        exploration.unfinished = run.unfinished();
        exploration.tally(run.take_steps(), violations, || run.events());
        if exploration.schedules >= MAX_SCHEDULES || exploration.unfinished {
            break;
        }
    }
    Ok(exploration)
}
