//! # fencing-lab
//!
//! A lab about one idea: **authority can become stale**. A worker checks that
//! it may act, pauses, and comes back after someone else was given authority.
//! Only the destination that accepts the effect can tell the old request from
//! the new one, and only if it checks inside the transaction that writes.
//!
//! The learner writes two functions, `install_generation` and `apply`, in
//! `exercises/`, a crate of its own whose one dependency is the lab's API
//! (`api/`, the crate `fencing_lab_api`: `Tx`, `Outcome`, `LabError`).
//! Everything else is this crate, the harness: a real SQLite file, the
//! connections, checkpoints where tests pause the destination or inject a
//! fault, the counterexamples, and the narrated transcript. The learner's
//! code cannot name any of it, and this crate never links the learner's:
//! the program that runs the lab hands it the functions ([`wire`]), the
//! learner's or, with the root package's feature `solutions`, the
//! reference's (`solutions/`).
//!
//! What this crate is not: a fencing library. It executes one SQLite file,
//! local transactions and faults the harness injects; with the feature
//! `etcd`, a three-member etcd cluster on this one machine issues the
//! tokens. Issuance across machines, Chubby's sequencers, fencing products
//! and physical isolation are referenced in the text, never implemented.
//!
//! # Layout
//!
//! The crate root is only the face: re-exports, and the constant below.
//! The learner's code is called through [`Session`]'s methods
//! (`db.apply(…)`, `db.install_generation(…)`), which run it inside the
//! connection's checkpoint layer and behind the panic guard
//! (`exercise.rs`, which also holds the table a program hands over with
//! [`wire`]).
//!
//! - [`claims`]: the claim catalogue (ids, one-line claims, points, hints),
//!   the package `staff/claims/`, shared with the grader.
//! - [`db`]: the lab file, its schema and connections ([`LabConnection`]);
//!   the transaction the learner's code holds ([`Tx`]) is the API's.
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
//! - `exercises/` and `solutions/`: the two functions, stub and reference,
//!   the crates `fencing_lab_exercises` and `fencing_lab_solutions` on top
//!   of `api/`. This crate links neither: the program that runs the lab
//!   hands it the functions ([`wire`]), so a save there rebuilds none of
//!   the harness.

pub mod checkpoint;
pub mod counterexample;
pub mod db;
pub mod durability;
#[cfg(feature = "etcd")]
pub mod etcd;
mod exercise;
pub mod explore;
pub mod external;
pub mod facts;
#[cfg(any(feature = "postgres", feature = "etcd"))]
mod loopback;
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
pub use db::{Journal, Lab, LabConnection};
pub use external::ExternalApi;
/// What the learner's code may call, a crate of its own (`api/`).
pub use fencing_lab_api::{
    LabError, MAX_REQUEST_ID_BYTES, Outcome, Record, Sql, State, Tx, describe, describe_error,
};
/// The claim catalogue (the package `lab-claims`): claims, points, tracks and
/// the hints asked by step.
pub use lab_claims as claims;
pub use panics::{panic_message, quiet_learner_panics};
pub use store::{Session, Store};

/// Set, the databases' defences against the code under test are off: no
/// authorizer on SQLite's connections, and PostgreSQL's sessions log in as
/// the lab's own user instead of `pg::LEARNER`. Only for
/// `.ci/hostile-observer`'s proof that each hostile case it grades is
/// stopped by them and by nothing else: the grader's sandbox never passes
/// it on, and the code under test cannot set it.
pub const UNGUARDED: &str = "FENCING_LAB_UNGUARDED";

/// The learner's functions (or the reference's), as the harness calls
/// them: the table a program hands over ([`wire`]) and reads back
/// ([`implementation`]).
pub use exercise::{Implementation, implementation, wire};
