//! What an exploration reports: how many schedules ran and held, and per
//! broken invariant the plainest schedule that broke it.

use std::fmt;

use super::Setup;
use super::invariants::{Invariant, Violation};

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
    /// What the lab's connections did in it, in the database's order, and
    /// what the exploration calls them.
    pub events: (Vec<crate::claims::facts::Event>, Vec<(usize, String)>),
}

impl Schedule {
    /// The invariants it broke, each once, in their order.
    pub fn broken(&self) -> Vec<Invariant> {
        let mut broken: Vec<Invariant> = self.violations.iter().map(|v| v.invariant).collect();
        broken.sort();
        broken.dedup();
        broken
    }

    /// The story's telling: where the schedule sits in its exploration (of
    /// `of` schedules, under `setup`, `unfinished` if a stub stopped it),
    /// then its steps, numbered, one an indented line.
    pub fn told(&self, of: usize, setup: impl fmt::Display, unfinished: bool) -> String {
        let mut text = format!(
            "schedule {} of {of} ({setup}{})",
            self.number,
            if unfinished {
                "; stopped there: an exercise is still a stub"
            } else {
                ""
            }
        );
        for step in self.numbered_steps() {
            text.push_str("\n              ");
            text.push_str(&step);
        }
        text
    }

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

/// What an exploration found: of the stale-authority story ([`Setup`], the
/// default), or of a duplicate delivered twice at once
/// ([`Duplicates`](super::Duplicates)).
#[derive(Debug, Clone)]
pub struct Exploration<S = Setup> {
    /// What was explored.
    pub setup: S,
    /// How many schedules ran.
    pub schedules: usize,
    /// How many of them kept every invariant.
    pub held: usize,
    /// How many schedules ran another actor (the authority's install, or
    /// the duplicate delivery) while a call was paused at a checkpoint:
    /// zero would mean no checkpoint was ever reached.
    pub paused: usize,
    /// Whether the exploration stopped after the first schedule that met an
    /// exercise still holding its `todo!()`: every later schedule would
    /// only say so again.
    pub unfinished: bool,
    /// Per broken invariant: how many schedules broke it, and the first of
    /// those with the fewest violations (the plainest example).
    broken: Vec<(Invariant, usize, Schedule)>,
}

impl<S> Exploration<S> {
    /// An exploration of `setup` that has run nothing yet.
    pub(super) fn new(setup: S) -> Exploration<S> {
        Exploration {
            setup,
            schedules: 0,
            held: 0,
            paused: 0,
            unfinished: false,
            broken: Vec::new(),
        }
    }

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
    pub(super) fn tally(
        &mut self,
        steps: Vec<String>,
        violations: Vec<Violation>,
        events: impl FnOnce() -> (Vec<crate::claims::facts::Event>, Vec<(usize, String)>),
    ) {
        self.schedules += 1;
        if violations.is_empty() {
            self.held += 1;
            return;
        }
        let schedule = Schedule {
            number: self.schedules,
            steps,
            violations,
            events: events(),
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
