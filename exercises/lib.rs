//! The learner's crate: `apply.rs` and `install_generation.rs` (yours),
//! compiled with nothing but the lab's API in reach. This file is the
//! lab's; you never need to edit it.
//!
//! With the feature `solutions` the reference in `solutions/` is compiled
//! instead, file for file.

// No unsafe code in a learner's exercise, and no `allow` can undo it.
#![forbid(unsafe_code)]

/// What your files name as `crate::…`: `Destination`, `Tx`, `LabError`,
/// `Outcome`, `Record`, `TransactionBehavior`, and `sql` for SQL of your own.
pub use fencing_lab_api::*;

/// Exercise 1: the authority installs a new generation.
#[cfg_attr(not(feature = "solutions"), path = "install_generation.rs")]
#[cfg_attr(feature = "solutions", path = "../solutions/install_generation.rs")]
mod install_generation;

/// Exercise 2: the destination applies a worker's request, or refuses it.
#[cfg_attr(not(feature = "solutions"), path = "apply.rs")]
#[cfg_attr(feature = "solutions", path = "../solutions/apply.rs")]
mod apply;

/// The PostgreSQL track's two exercises (`postgres/`); they name the
/// API's `crate::pg::PgDestination`, and `crate::pg::sql` for SQL of their
/// own.
#[cfg(feature = "postgres")]
pub mod postgres {
    #[cfg_attr(not(feature = "solutions"), path = "install_generation.rs")]
    #[cfg_attr(
        feature = "solutions",
        path = "../../solutions/postgres/install_generation.rs"
    )]
    mod install_generation;

    #[cfg_attr(not(feature = "solutions"), path = "apply.rs")]
    #[cfg_attr(feature = "solutions", path = "../../solutions/postgres/apply.rs")]
    mod apply;

    pub use apply::apply;
    pub use install_generation::install_generation;

    /// Lesson 8's contract: the two SQL functions of `contract.sql`.
    #[cfg(not(feature = "solutions"))]
    pub const CONTRACT: &str = include_str!("postgres/contract.sql");
    /// Lesson 8's contract: the reference's two SQL functions.
    #[cfg(feature = "solutions")]
    pub const CONTRACT: &str = include_str!("../solutions/postgres/contract.sql");
}

/// The etcd track's exercise: a worker that takes its authority from a
/// lock service (`etcd/worker.rs`).
#[cfg(feature = "etcd")]
pub mod etcd {
    /// What `etcd/worker.rs` names as `crate::etcd::…`.
    pub use fencing_lab_api::etcd::*;

    #[cfg_attr(not(feature = "solutions"), path = "worker.rs")]
    #[cfg_attr(feature = "solutions", path = "../../solutions/etcd/worker.rs")]
    mod worker;

    pub use worker::work;
}

pub use apply::apply;
pub use install_generation::install_generation;

/// These functions, as the program that runs the lab hands them to the
/// harness (which never links this crate: a save here rebuilds this crate
/// and that program, not the harness).
pub const IMPLEMENTATION: implementation::Implementation = implementation::Implementation {
    name: if cfg!(feature = "solutions") {
        "the reference (solutions/)"
    } else {
        "your exercises (exercises/)"
    },
    install_generation,
    apply,
    #[cfg(feature = "postgres")]
    postgres: implementation::Postgres {
        install_generation: postgres::install_generation,
        apply: postgres::apply,
        contract: postgres::CONTRACT,
    },
    #[cfg(feature = "etcd")]
    etcd_work: etcd::work,
};
