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

/// Which implementation is compiled in, for the transcript's header.
pub const IMPLEMENTATION: &str = if cfg!(feature = "solutions") {
    "the reference (solutions/)"
} else {
    "your exercises (exercises/)"
};
