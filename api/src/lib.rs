//! # fencing-lab-api
//!
//! Everything the learner's code may call, and nothing else. The learner's
//! two functions live in a crate of their own (`exercises/`), whose one
//! dependency is this crate: the compiler, not a review, keeps them from the
//! harness's connections, checkpoints, hooks and statics.
//!
//! - [`Destination`] and [`Tx`]: a transaction on the lab's SQLite file,
//!   one method per statement the exercise needs, and [`Tx::sql`] for SQL of
//!   one's own ([`Sql`]: statements, nothing else of the connection).
//! - [`Outcome`], [`LabError`], [`Record`], [`State`]: what the functions
//!   return and read.
//! - [`sql`]: the parts of rusqlite a statement of one's own needs
//!   (parameters, rows, `optional()`); `pg::sql` is its PostgreSQL
//!   counterpart (rows, parameters, errors and their SQLSTATE).
//! - [`fault`]: how a fault the harness injects comes back as itself; the
//!   harness's side, of no use to an exercise.
//!
//! The statements of a learner's connection are checked by the database as
//! well: the harness gives every such connection an authorizer that refuses
//! what could blind its observer (creating or dropping schema objects,
//! `ATTACH`, most `PRAGMA`s, the harness's own SQL functions), with
//! [`LabError::NotAllowed`] naming what was refused.

#![forbid(unsafe_code)]

mod error;
#[cfg(feature = "etcd")]
pub mod etcd;
#[doc(hidden)]
pub mod fault;
#[doc(hidden)]
pub mod implementation;
mod outcome;
#[cfg(feature = "postgres")]
pub mod pg;
mod sqlite;

pub use error::{LabError, describe, describe_error};

/// The longest request id the contract allows, in bytes of UTF-8. The
/// `requests` table of every destination refuses a longer one (its
/// constraint `request_id_length`), which reaches the code as
/// [`LabError::RequestIdTooLong`].
pub const MAX_REQUEST_ID_BYTES: usize = 255;

/// The name of the constraint that holds request ids to
/// [`MAX_REQUEST_ID_BYTES`], in every destination's schema.
#[doc(hidden)]
pub const REQUEST_ID_LENGTH: &str = "request_id_length";
pub use outcome::Outcome;
pub use sqlite::{Destination, Record, Sql, State, Tx, rows};

/// How a transaction on SQLite takes its locks: `Deferred` at the first
/// statement that needs one, `Immediate` the write lock at once,
/// `Exclusive` every lock at once.
pub use rusqlite::TransactionBehavior;

/// The parts of rusqlite that SQL of one's own needs through [`Tx::sql`]:
/// parameters, rows and their types, and `optional()` for a row that may be
/// missing. The connection itself is not among them.
pub mod sql {
    pub use rusqlite::types;
    pub use rusqlite::{
        CachedStatement, Error, ErrorCode, OptionalExtension, Params, Result, Row, Statement,
        ToSql, named_params, params, params_from_iter,
    };
}
