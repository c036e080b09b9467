//! The learner's functions as the harness calls them: a table of function
//! pointers. The harness never links the learner's crate. The program that
//! runs the lab (the graded test binary, `cargo run`, a worker process)
//! links it, and hands the harness its table
//! (`fencing_lab_exercises::IMPLEMENTATION`) before the first call; so a
//! save under `exercises/` rebuilds that crate and the program, never the
//! harness. Nothing here is of use to an exercise.

use crate::{Destination, LabError, Outcome};

/// The SQLite track's `install_generation`.
pub type InstallGeneration = fn(&mut Destination<'_>, &str, i64) -> Result<(), LabError>;
/// The SQLite track's `apply`.
pub type Apply = fn(&mut Destination<'_>, &str, i64, &str, i64) -> Result<Outcome, LabError>;

/// One implementation of the exercises: the learner's, or the reference.
#[derive(Clone, Copy)]
pub struct Implementation {
    /// Which it is, in words, for the transcript's header.
    pub name: &'static str,
    /// `exercises/install_generation.rs`.
    pub install_generation: InstallGeneration,
    /// `exercises/apply.rs`.
    pub apply: Apply,
    /// `exercises/postgres/`.
    #[cfg(feature = "postgres")]
    pub postgres: Postgres,
    /// `exercises/etcd/worker.rs`.
    #[cfg(feature = "etcd")]
    pub etcd_work: fn(&mut crate::etcd::Worker<'_>, &crate::etcd::Job) -> Result<Outcome, LabError>,
}

/// The PostgreSQL track's exercises.
#[cfg(feature = "postgres")]
#[derive(Clone, Copy)]
pub struct Postgres {
    /// `exercises/postgres/install_generation.rs`.
    pub install_generation:
        fn(&mut crate::pg::PgDestination<'_>, &str, i64) -> Result<(), LabError>,
    /// `exercises/postgres/apply.rs`.
    pub apply:
        fn(&mut crate::pg::PgDestination<'_>, &str, i64, &str, i64) -> Result<Outcome, LabError>,
    /// `exercises/postgres/contract.sql`: lesson 8's two SQL functions, the
    /// file's text.
    pub contract: &'static str,
}
