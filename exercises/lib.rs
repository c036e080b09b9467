//! The learner's crate: `apply.rs` and `install_generation.rs` (yours),
//! compiled with nothing but the lab's API in reach. This file is the
//! lab's; you never need to edit it.
//!
//! With the feature `solutions` this crate is the reference instead (the
//! crate in `solutions/`, file for file), and none of your files is
//! compiled: `cargo run --features solutions` works while yours do not.

// No unsafe code in a learner's exercise, and no `allow` can undo it.
#![forbid(unsafe_code)]

/// What your files name as `crate::…`: `Destination`, `Tx`, `LabError`,
/// `Outcome`, `Record`, `TransactionBehavior`, and `sql` for SQL of your own.
pub use fencing_lab_api::*;

/// Exercise 1: the authority installs a new generation.
#[cfg(not(feature = "solutions"))]
mod install_generation;

/// Exercise 2: the destination applies a worker's request, or refuses it.
#[cfg(not(feature = "solutions"))]
mod apply;

/// The PostgreSQL track's two exercises (`postgres/`); they name the
/// API's `crate::pg::PgDestination`, and `crate::pg::sql` for SQL of their
/// own.
#[cfg(all(feature = "postgres", not(feature = "solutions")))]
pub mod postgres {
    mod apply;
    mod install_generation;

    pub use apply::apply;
    pub use install_generation::install_generation;

    /// Lesson 8's contract: the two SQL functions of `contract.sql`.
    pub const CONTRACT: &str = include_str!("postgres/contract.sql");
}

/// The etcd track's exercise: a worker that takes its authority from a
/// lock service (`etcd/worker.rs`).
#[cfg(all(feature = "etcd", not(feature = "solutions")))]
pub mod etcd {
    /// What `etcd/worker.rs` names as `crate::etcd::…`.
    pub use fencing_lab_api::etcd::*;

    mod worker;

    pub use worker::work;
}

/// Your functions, as the program that runs the lab hands them to the
/// harness (which never links this crate: a save here rebuilds this crate
/// and that program, not the harness).
#[cfg(not(feature = "solutions"))]
pub const IMPLEMENTATION: implementation::Implementation =
    fencing_lab_api::implementation_table!("your exercises (exercises/)");

/// With the feature `solutions`: the reference's functions instead.
#[cfg(feature = "solutions")]
pub use fencing_lab_solutions::IMPLEMENTATION;
