//! The one error type of the lab, and how its values read in one line.
//!
//! Every refusal the destination can make is a variant of its own, carrying
//! the numbers that explain it, so a test (or a learner reading a failure) can
//! tell *why* a request was refused. Two distinctions matter most to the
//! lesson:
//!
//! - a **stale** generation (lower than the installed one) is not the same as
//!   a generation that was **never issued** (higher than the installed one);
//! - **contention** (another connection holds the write lock) is not a
//!   generation rejection at all: the request was not judged, only delayed.

use std::fmt;

/// Everything that can go wrong in the lab, from bad input to a busy database.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The presented generation is lower than the installed one: the caller
    /// held authority once, and lost it.
    #[error("stale generation: presented {presented}, installed {installed}")]
    Stale {
        /// The generation the worker presented.
        presented: i64,
        /// The generation installed at the destination.
        installed: i64,
    },

    /// The presented generation is higher than the installed one: nobody
    /// installed it, so the caller invented it (or was granted it before the
    /// authority installed it).
    #[error("generation never issued: presented {presented}, installed {installed}")]
    NeverIssued {
        /// The generation the worker presented.
        presented: i64,
        /// The generation installed at the destination.
        installed: i64,
    },

    /// `install_generation` was asked for a generation that is not strictly
    /// higher than the installed one.
    #[error("generation not higher: requested {requested}, installed {installed}")]
    NotHigher {
        /// The generation the authority asked to install.
        requested: i64,
        /// The generation already installed.
        installed: i64,
    },

    /// The request id was seen before with a different delta.
    #[error(
        "conflicting request {request_id:?}: recorded with delta {recorded_delta}, presented with delta {presented_delta}"
    )]
    Conflict {
        /// The request id presented twice.
        request_id: String,
        /// The delta stored with the first request.
        recorded_delta: i64,
        /// The delta presented now.
        presented_delta: i64,
    },

    /// No resource of that name exists.
    #[error("unknown resource {0:?}")]
    UnknownResource(String),

    /// The request id is empty, so a retry could never be recognised.
    #[error("empty request id")]
    EmptyRequestId,

    /// The request id is longer than the contract allows
    /// ([`crate::MAX_REQUEST_ID_BYTES`] bytes of UTF-8). The destination's
    /// table refuses to record it, whatever statement tries.
    #[error("request id too long: more than {} bytes", crate::MAX_REQUEST_ID_BYTES)]
    RequestIdTooLong,

    /// Generations start at 1; nothing below that is ever issued.
    #[error("generation must be at least 1, got {0}")]
    GenerationBelowOne(i64),

    /// The new value would not fit in a 64-bit integer.
    #[error("value overflow: {value} + {delta} does not fit in an i64")]
    Overflow {
        /// The value before the delta.
        value: i64,
        /// The delta that would overflow it.
        delta: i64,
    },

    /// Another connection holds the lock this one needs: SQLite's write lock
    /// on the whole file, or a PostgreSQL row lock. Nothing was decided about
    /// the request; trying again later may succeed.
    #[error("contention: another connection holds the lock")]
    Contention,

    /// PostgreSQL could not serialize this transaction with a concurrent one
    /// (SQLSTATE 40001). Like contention, it judged nothing; a retry may
    /// succeed.
    #[error("serialization failure: a concurrent transaction changed what this one read")]
    SerializationFailure,

    /// The database refused the statement to this session's role (SQLSTATE
    /// 42501): the role may not touch that table or call that function
    /// (lesson L8). Not a judgement of the request's generation, and not
    /// contention: no retry will change it. The text is the server's, which
    /// starts "permission denied for".
    #[cfg(feature = "postgres")]
    #[error("{0}")]
    PermissionDenied(String),

    /// Lesson 8's file (`exercises/postgres/contract.sql`) did not load,
    /// or left the lab's schema other than the lab made it; the text says
    /// what went wrong. No test of that track can run on it.
    #[cfg(feature = "postgres")]
    #[error("exercises/postgres/contract.sql cannot be used: {0}")]
    ContractRejected(String),

    /// The database refused a statement of the code under test that could
    /// blind the lab's observer: creating or dropping a table, view, index
    /// or trigger, `ATTACH`, a `PRAGMA` outside a short read-only list, or a
    /// call of the harness's own SQL functions. The text names what.
    #[error("not allowed in the lab: {0}")]
    NotAllowed(String),

    /// A test injected a fault; the text says where.
    #[error("injected fault {0}")]
    InjectedFault(&'static str),

    /// The exercise still holds its `todo!()`.
    #[error("{function} is not implemented yet: open {file}")]
    NotImplemented {
        /// The function that is still a stub.
        function: &'static str,
        /// The file to open.
        file: &'static str,
    },

    /// The exercise panicked for a reason other than `todo!()`.
    #[error("{function} panicked: {message}")]
    Panicked {
        /// The function that panicked.
        function: &'static str,
        /// The panic message.
        message: String,
    },

    /// SQLite would not put the file in the requested journal mode (WAL
    /// needs shared memory, which some file systems lack).
    #[error("journal mode {requested} unavailable: sqlite reports {got}")]
    JournalMode {
        /// The mode the lab asked for.
        requested: &'static str,
        /// The mode SQLite reported instead.
        got: String,
    },

    /// Any other SQLite failure.
    #[error("database error")]
    Database(#[source] rusqlite::Error),

    /// No PostgreSQL server could be reached or started; the text says why.
    #[error("no postgresql server: {0}")]
    ServerUnavailable(String),

    /// Any other PostgreSQL failure.
    #[cfg(feature = "postgres")]
    #[error("postgresql error")]
    Postgres(#[source] postgres::Error),

    /// An etcd worker's token is lower than the generation installed at the
    /// destination: a newer holder of the lock has been there, so this one
    /// stops without acting.
    #[cfg(feature = "etcd")]
    #[error(
        "superseded: this worker's token is {token}, the destination has {installed} installed"
    )]
    Superseded {
        /// The token this worker took from its lock.
        token: i64,
        /// The generation installed at the destination.
        installed: i64,
    },

    /// No etcd cluster could be started or reached; the text says why.
    #[cfg(feature = "etcd")]
    #[error("no etcd cluster: {0}")]
    CoordinatorUnavailable(String),

    /// Any other etcd failure.
    #[cfg(feature = "etcd")]
    #[error("etcd error")]
    Etcd(#[source] etcd_client::Error),

    /// The lab could not create its temporary directory.
    #[error("cannot create the lab directory")]
    Io(#[source] std::io::Error),
}

#[cfg(feature = "etcd")]
impl From<etcd_client::Error> for LabError {
    fn from(error: etcd_client::Error) -> Self {
        LabError::Etcd(error)
    }
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
        | LabError::NotAllowed(_)
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
        #[cfg(feature = "postgres")]
        LabError::PermissionDenied(_) | LabError::ContractRejected(_) => error.to_string(),
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
