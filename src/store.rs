//! What the graded tests need from a destination, whichever database it is:
//! a [`Store`] (the SQLite lab, or a lab on a PostgreSQL server) and the
//! [`Session`]s workers and the authority open on it.
//!
//! The claims that hold on both destinations are written once against these
//! two traits and run once per destination. Everything the lesson is about
//! stays in the learner's two functions; these traits only route a call to
//! the right one.

use crate::checkpoint::{Checkpoint, Trace};
use crate::{LabError, Outcome, Record, State};

/// One lab: a destination with `fund-A` and `fund-B`, and an observer.
pub trait Store: Clone + 'static {
    /// A connection to it.
    type Session: Session;

    /// Opens a new connection for a worker or the authority.
    fn connect(&self) -> Result<Self::Session, LabError>;

    /// A resource's generation and value, read outside every transaction.
    fn state(&self, resource: &str) -> Result<State, LabError>;

    /// Every recorded request of a resource, ordered by request id.
    fn records(&self, resource: &str) -> Result<Vec<Record>, LabError>;

    /// The names of all resources.
    fn resource_names(&self) -> Result<Vec<String>, LabError>;

    /// The counterexample of L5.3: a direct SQL write of `value`.
    fn direct_sql_write(&self, resource: &str, value: i64) -> Result<(), LabError>;

    /// The counterexample of L5.4: an old generation restored.
    fn restore_generation(&self, resource: &str, generation: i64) -> Result<(), LabError>;

    /// Puts the lab back to how it was made: `fund-A` and `fund-B` at
    /// generation 1, value 0, no records, no other resource. For a test
    /// that runs many short cases on one lab (L2.7's model), where a new
    /// lab per case would cost more than the case. Open sessions stay
    /// usable; none may be inside a transaction.
    fn restart(&self) -> Result<(), LabError>;

    /// What the lab's connections did so far, where it keeps that.
    fn trace(&self) -> Option<Trace> {
        None
    }
}

/// One connection, as a worker or the authority holds it.
pub trait Session {
    /// The learner's `apply` for this destination.
    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError>;

    /// The learner's `install_generation` for this destination.
    fn install_generation(&mut self, resource: &str, new_generation: i64) -> Result<(), LabError>;

    /// The counterexample of L1.2: a worker-side check, then a write that
    /// carries no generation.
    fn unfenced_write(
        &mut self,
        resource: &str,
        held_generation: i64,
        delta: i64,
    ) -> Result<i64, LabError>;

    /// Installs the hook that runs at every checkpoint of this connection.
    fn on_checkpoint(&mut self, hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static);

    /// Removes the hook.
    fn clear_checkpoint(&mut self);

    /// Why the last call could not be fully observed at the checkpoints
    /// (code that took a route this destination does not see), if so.
    /// `None` on SQLite, where every statement reaches them.
    fn unobserved(&self) -> Option<&'static str> {
        None
    }

    /// The lab's events this connection adds to, and its number there.
    fn traced(&self) -> Option<(Trace, usize)> {
        None
    }
}

impl Store for crate::Lab {
    type Session = crate::LabConnection;

    fn connect(&self) -> Result<Self::Session, LabError> {
        crate::Lab::connect(self)
    }

    fn state(&self, resource: &str) -> Result<State, LabError> {
        crate::Lab::state(self, resource)
    }

    fn records(&self, resource: &str) -> Result<Vec<Record>, LabError> {
        crate::Lab::records(self, resource)
    }

    fn resource_names(&self) -> Result<Vec<String>, LabError> {
        crate::Lab::resource_names(self)
    }

    fn direct_sql_write(&self, resource: &str, value: i64) -> Result<(), LabError> {
        crate::counterexample::direct_sql_write(&mut self.connect()?, resource, value)
    }

    fn restore_generation(&self, resource: &str, generation: i64) -> Result<(), LabError> {
        crate::counterexample::restore_generation(&mut self.connect()?, resource, generation)
    }

    fn restart(&self) -> Result<(), LabError> {
        crate::Lab::restart(self)
    }

    fn trace(&self) -> Option<Trace> {
        Some(crate::Lab::trace(self).clone())
    }
}

impl Session for crate::LabConnection {
    fn apply(
        &mut self,
        resource: &str,
        generation: i64,
        request_id: &str,
        delta: i64,
    ) -> Result<Outcome, LabError> {
        crate::exercise::apply(self, resource, generation, request_id, delta)
    }

    fn install_generation(&mut self, resource: &str, new_generation: i64) -> Result<(), LabError> {
        crate::exercise::install_generation(self, resource, new_generation)
    }

    fn unfenced_write(
        &mut self,
        resource: &str,
        held_generation: i64,
        delta: i64,
    ) -> Result<i64, LabError> {
        crate::counterexample::unfenced_write(self, resource, held_generation, delta)
    }

    fn on_checkpoint(&mut self, hook: impl FnMut(Checkpoint) -> Result<(), LabError> + 'static) {
        crate::LabConnection::on_checkpoint(self, hook);
    }

    fn clear_checkpoint(&mut self) {
        crate::LabConnection::clear_checkpoint(self);
    }

    fn traced(&self) -> Option<(Trace, usize)> {
        self.hooks().tracer()
    }
}
