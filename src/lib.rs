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
//! - [`story`]: the lab's scenarios, lesson by lesson, written to a
//!   [`Transcript`](transcript::Transcript).
//! - [`transcript`]: the plain-text record of a scenario.
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
#[cfg(feature = "postgres")]
pub mod pg;
mod schema;
pub mod store;
pub mod story;
pub mod transcript;
pub mod watch;

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

pub use checkpoint::Checkpoint;
pub use db::{Destination, Journal, Lab, Record, State, Tx};
pub use error::LabError;
pub use external::ExternalApi;
/// The claim catalogue (the package `lab-claims`): claims, points, tracks and
/// the hints asked by step.
pub use lab_claims as claims;
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

/// What a successful `apply` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The delta was applied now; `result` is the new value.
    Applied {
        /// The value after this request.
        result: i64,
    },
    /// The request was applied before; `result` is what that first apply
    /// returned. Nothing changed now.
    Replayed {
        /// The result stored with the original request.
        result: i64,
    },
}

impl Outcome {
    /// The result, applied or replayed.
    pub fn result(self) -> i64 {
        match self {
            Outcome::Applied { result } | Outcome::Replayed { result } => result,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Applied { result } => write!(f, "applied, result {result}"),
            Outcome::Replayed { result } => write!(f, "replayed, original result {result}"),
        }
    }
}

/// The authority installs `new_generation` on `resource` (the learner's
/// `exercises/install_generation.rs`).
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    db.hooks().around(|| {
        guard("install_generation", claims::INSTALL, || {
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
        guard("apply", claims::APPLY, || {
            apply_impl::apply(db, resource, generation, request_id, delta)
        })
    })
}

/// Runs the learner's function and turns a panic into an error, so an
/// unfinished stub reads as "not implemented yet: open this file" in tests
/// and in the transcript. A panic unwinds through the open transaction, whose
/// drop rolls it back.
pub(crate) fn guard<T>(
    function: &'static str,
    file: &'static str,
    body: impl FnOnce() -> Result<T, LabError>,
) -> Result<T, LabError> {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref()).unwrap_or_default();
            if message.starts_with("not yet implemented") {
                Err(LabError::NotImplemented { function, file })
            } else {
                Err(LabError::Panicked {
                    function,
                    message: message.to_owned(),
                })
            }
        }
    }
}

/// The text a panic carries (`panic!("...")`, `todo!()`), if it carries
/// text.
pub fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// Keeps an unfinished exercise's `todo!()` from printing the default
/// panic report: [`guard`] turns it into a line that names the file, so the
/// report would only repeat it. Every other panic is reported as usual, so
/// one in the harness never ends a program without a word. Installed once
/// per process, however often it is called (`lab` and the tests call it).
pub fn quiet_todo_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let in_exercise = info
                .location()
                .is_some_and(|at| at.file().contains("exercises/"));
            let todo = panic_message(info.payload())
                .is_some_and(|message| message.starts_with("not yet implemented"));
            if !(in_exercise && todo) {
                report(info);
            }
        }));
    });
}

/// One line for any result of `apply`, as the transcript and the tests'
/// messages print it.
pub fn describe<T: fmt::Display>(result: &Result<T, LabError>) -> String {
    match result {
        Ok(value) => value.to_string(),
        Err(error) => describe_error(error),
    }
}

/// One line for an error: refusals read "rejected: ...", everything else
/// (contention, faults, unfinished exercises, harness failures) as itself.
pub fn describe_error(error: &LabError) -> String {
    match error {
        LabError::Contention
        | LabError::SerializationFailure
        | LabError::ServerUnavailable(_)
        | LabError::InjectedFault(_)
        | LabError::NotImplemented { .. }
        | LabError::Panicked { .. } => error.to_string(),
        LabError::Database(source) => format!("database error: {source}"),
        #[cfg(feature = "postgres")]
        LabError::Postgres(source) => match std::error::Error::source(source) {
            // The client's message ("error connecting to server") leaves
            // the reason ("connection refused") to its source.
            Some(cause) => format!("postgresql error: {source}: {cause}"),
            None => format!("postgresql error: {source}"),
        },
        #[cfg(feature = "etcd")]
        LabError::CoordinatorUnavailable(_) => error.to_string(),
        // Not a refusal: the worker saw a newer holder and did not ask.
        #[cfg(feature = "etcd")]
        LabError::Superseded { .. } => format!("stopped: {error}"),
        #[cfg(feature = "etcd")]
        LabError::Etcd(source) => format!("etcd error: {source}"),
        LabError::Io(source) => format!("cannot create the lab directory: {source}"),
        refusal => format!("rejected: {refusal}"),
    }
}
