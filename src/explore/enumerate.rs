//! The depth-first enumerator: every schedule of a run that makes choices,
//! each run once, found by running them.
//!
//! A run asks a [`Chooser`] for a choice each time it has one ("which of
//! these three actors moves next?", "pause here or not?") and says how many
//! options there are. [`DepthFirst`] starts with the first option of every
//! choice; after each run it keeps the choices up to the last one that still
//! has an untried option, takes that option, and lets the run make its later
//! choices afresh (first option again). So the choices that exist are the
//! ones the run reached, and the enumeration ends when every choice of every
//! run has had each of its options.
//!
//! The enumerator knows nothing about databases: it needs only that a run
//! given the same earlier choices reaches the same next choice with the same
//! number of options. A run that breaks that still ends (a replayed choice
//! past its options is cut to the last one), but may skip schedules.
//!
//! ```ignore
//! let mut schedules = DepthFirst::new();
//! let chooser = schedules.chooser();
//! while schedules.next_schedule() {
//!     let first = chooser.choose(2); // 0, then 1 on a later run
//!     // ... run the schedule, asking `chooser` at every choice
//! }
//! ```

use std::cell::RefCell;
use std::rc::Rc;

/// The handle a run asks for its choices; clones share one enumeration, so a
/// checkpoint hook can hold one.
#[derive(Clone, Default)]
pub struct Chooser(Rc<RefCell<Choices>>);

impl Chooser {
    /// Picks one of `options` (at least one): 0 the first time this choice
    /// is reached, the next untried option on a later schedule.
    pub fn choose(&self, options: usize) -> usize {
        self.0.borrow_mut().choose(options.max(1))
    }
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

/// Every schedule, depth first (see the module's documentation).
#[derive(Default)]
pub struct DepthFirst {
    /// The choices of the schedule being run.
    chooser: Chooser,
    /// Whether the first schedule was handed out.
    started: bool,
}

impl DepthFirst {
    /// An enumeration that has not run a schedule yet.
    pub fn new() -> DepthFirst {
        DepthFirst::default()
    }

    /// The handle the runs ask for their choices.
    pub fn chooser(&self) -> Chooser {
        self.chooser.clone()
    }

    /// Sets the chooser up for the next schedule; `false` once every
    /// schedule has run. The first call always returns `true`: a run that
    /// makes no choice is one schedule.
    pub fn next_schedule(&mut self) -> bool {
        let done = std::mem::take(&mut *self.chooser.0.borrow_mut());
        if !self.started {
            self.started = true;
            return true;
        }
        match done.next() {
            Some(replay) => {
                *self.chooser.0.borrow_mut() = Choices {
                    replay,
                    made: Vec::new(),
                };
                true
            }
            None => false,
        }
    }
}
