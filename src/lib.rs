//! # fencing-lab
//!
//! A lab about one idea: **authority can become stale**. A worker checks that
//! it may act, pauses, and comes back after someone else was given authority.
//! Only the destination that accepts the effect can tell the old request from
//! the new one, and only if it checks inside the transaction that writes.
//!
//! The learner writes two functions, [`install_generation`] and [`apply`], in
//! `exercises/`. Everything else is this crate: a real SQLite file, the
//! connections, checkpoints where tests pause the destination or inject a
//! fault, the counterexamples, and the narrated transcript. With the Cargo
//! feature `solutions` the reference in `solutions/` is compiled instead.
//!
//! What this crate is not: a fencing library. It executes one SQLite file,
//! local transactions and faults the harness injects; with the feature
//! `etcd`, a three-member etcd cluster on this one machine issues the
//! tokens. Issuance across machines, Chubby's sequencers, fencing products
//! and physical isolation are referenced in the text, never implemented.
//!
//! # Layout
//!
//! - [`claims`]: the claim catalogue (ids, one-line claims, points, hints),
//!   the package `claims/`, shared with the grader.
//! - [`db`]: the lab file, its schema, connections ([`Destination`]) and
//!   transactions ([`Tx`]).
//! - [`checkpoint`]: where a test pauses the destination or injects a fault.
//! - [`durability`]: a connection's `synchronous` level, for the benchmark.
//! - [`counterexample`]: the paths the contract does not cover.
//! - [`explore`]: every interleaving of two workers and the authority, and
//!   of one request delivered twice at once, run on a real file and checked
//!   against the invariants.
//! - [`external`]: a stand-in for an external API outside the database.
//! - `etcd` (feature `etcd`): workers in processes of their own that take
//!   a lock under a lease from a private etcd cluster, with their own
//!   exercise in `exercises/etcd/`.
//! - `pg` (feature `postgres`): the same destination on a PostgreSQL server,
//!   with its own two exercises in `exercises/postgres/`.
//! - [`store`]: the two destinations behind one interface, for the claims
//!   that hold on both.
//! - [`scenes`]: every scene of the lab, written once, one file per
//!   lesson: the graded tests run them with their checks, the story tells
//!   them.
//! - [`story`]: the lessons in order, their scenes told by a narrator into
//!   a [`Transcript`](transcript::Transcript).
//! - [`transcript`]: the plain-text record of a lesson.
//! - [`watch`]: how a SQLite connection's statements, whoever wrote them,
//!   reach the checkpoints.
//! - `exercises/` and `solutions/`: the two functions, stub and reference.

pub mod checkpoint;
pub mod counterexample;
pub mod db;
pub mod durability;
pub mod error;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod explore;
pub mod external;
#[cfg(any(feature = "postgres", feature = "etcd"))]
mod loopback;
mod outcome;
mod panics;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod scenes;
mod schema;
pub mod store;
pub mod story;
pub mod transcript;
pub mod watch;

pub use checkpoint::Checkpoint;
pub use db::{Destination, Journal, Lab, Record, State, Tx};
pub use error::{LabError, describe, describe_error};
pub use external::ExternalApi;
/// The claim catalogue (the package `lab-claims`): claims, points, tracks and
/// the hints asked by step.
pub use lab_claims as claims;
pub use outcome::Outcome;
pub use panics::{panic_message, quiet_todo_panics};
pub use store::{Session, Store};

/// The learner's code, or the reference with `--features solutions`.
#[cfg_attr(
    not(feature = "solutions"),
    path = "../exercises/install_generation.rs"
)]
#[cfg_attr(feature = "solutions", path = "../solutions/install_generation.rs")]
// No unsafe code in a learner's exercise, and no `allow` can undo it.
#[forbid(unsafe_code)]
mod install_generation_impl;

#[cfg_attr(not(feature = "solutions"), path = "../exercises/apply.rs")]
#[cfg_attr(feature = "solutions", path = "../solutions/apply.rs")]
// No unsafe code in a learner's exercise, and no `allow` can undo it.
#[forbid(unsafe_code)]
mod apply_impl;

/// Which implementation is compiled in, for the transcript's header.
pub const IMPLEMENTATION: &str = if cfg!(feature = "solutions") {
    "the reference (solutions/)"
} else {
    "your exercises (exercises/)"
};

/// The authority installs `new_generation` on `resource` (the learner's
/// `exercises/install_generation.rs`).
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    db.hooks().around(|| {
        panics::guard("install_generation", claims::INSTALL, || {
            install_generation_impl::install_generation(db, resource, new_generation)
        })
    })
}

/// The worker asks the destination to apply `delta` to `resource` under
/// `generation`, as request `request_id` (the learner's
/// `exercises/apply.rs`).
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    db.hooks().around(|| {
        panics::guard("apply", claims::APPLY, || {
            apply_impl::apply(db, resource, generation, request_id, delta)
        })
    })
}
