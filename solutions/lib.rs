//! The reference: the learner's exercises done, file for file
//! (`install_generation.rs`, `apply.rs`, and the server tracks' in
//! `postgres/` and `etcd/`), a crate of its own on top of the same API.
//! The learner's crate (`exercises/`) is this one with the feature
//! `solutions`, and then compiles none of the learner's files.

#![forbid(unsafe_code)]

/// What the files name as `crate::…`, as in the learner's crate.
pub use fencing_lab_api::*;

mod apply;
mod install_generation;

/// The PostgreSQL track's two functions, and lesson 8's SQL file.
#[cfg(feature = "postgres")]
pub mod postgres {
    mod apply;
    mod install_generation;

    pub use apply::apply;
    pub use install_generation::install_generation;

    /// Lesson 8's contract: the two SQL functions of `contract.sql`.
    pub const CONTRACT: &str = include_str!("postgres/contract.sql");
}

/// The etcd track's worker.
#[cfg(feature = "etcd")]
pub mod etcd {
    /// What `etcd/worker.rs` names as `crate::etcd::…`.
    pub use fencing_lab_api::etcd::*;

    mod worker;

    pub use worker::work;
}

/// The reference's functions, as the program that runs the lab hands them
/// to the harness.
pub const IMPLEMENTATION: implementation::Implementation =
    fencing_lab_api::implementation_table!("the reference (solutions/)");
