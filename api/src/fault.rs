//! How a fault the harness injects at a checkpoint comes back to the code
//! under test as itself.
//!
//! A test's hook may fail a statement from inside the database (a trigger
//! on SQLite, the gate on PostgreSQL). The database hands back its own
//! error, which has lost the [`LabError`] the hook returned; the
//! conversions `From<rusqlite::Error>` and `From<postgres::Error>` look
//! for it, so `?` in the code under test yields the hook's fault. They live
//! here, beside the fault they take: the error type knows nothing of them.
//! This is the harness's side of that hand-over; an exercise gains nothing
//! from it.

use std::cell::RefCell;

use crate::LabError;

/// How a fault raised by a hook reads inside SQLite's error message.
pub const SQLITE_MARK: &str = "fencing-lab checkpoint fault: ";

/// The SQLSTATE with which the PostgreSQL gate fails a statement at a
/// checkpoint.
pub const SERVER_CODE: &str = "FL001";

/// Where the fault of a failed server statement is kept, for this thread.
type Source = Box<dyn Fn() -> Option<LabError>>;

thread_local! {
    /// The fault a hook raised on this thread, until `?` picks it up.
    static SLOT: RefCell<Option<LabError>> = const { RefCell::new(None) };
    /// Where this thread's server faults are kept, while a call runs.
    static SERVER: RefCell<Option<Source>> = const { RefCell::new(None) };
}

/// Keeps `fault` for the next error on this thread that carries
/// [`SQLITE_MARK`] or is an authorizer's refusal, and returns the message
/// the statement should fail with.
pub fn hand_back(fault: LabError) -> String {
    let message = format!("{SQLITE_MARK}{fault}");
    SLOT.with(|slot| *slot.borrow_mut() = Some(fault));
    message
}

/// Forgets a fault nobody picked up (a statement that failed, but whose
/// error the code under test never converted).
pub fn forget() {
    SLOT.with(|slot| slot.borrow_mut().take());
}

/// Tells this thread where the faults of [`SERVER_CODE`] come from while a
/// call runs (`None` when it ends).
pub fn from_server(source: Option<Box<dyn Fn() -> Option<LabError>>>) {
    SERVER.with(|server| *server.borrow_mut() = source);
}

/// The fault kept by [`hand_back`], if any.
pub(crate) fn take() -> Option<LabError> {
    SLOT.with(|slot| slot.borrow_mut().take())
}

/// The fault behind a statement the server failed with [`SERVER_CODE`].
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn take_from_server() -> Option<LabError> {
    SERVER.with(|server| server.borrow().as_ref().and_then(|source| source()))
}

impl From<rusqlite::Error> for LabError {
    /// Busy and locked become [`LabError::Contention`]; with a zero busy
    /// timeout they mean "someone else holds the lock right now".
    fn from(error: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{AuthorizationForStatementDenied, DatabaseBusy, DatabaseLocked};
        // A fault a test injected through a trigger, or the authorizer's
        // refusal, comes back as itself.
        let message = match &error {
            rusqlite::Error::SqliteFailure(_, Some(message))
            | rusqlite::Error::SqlInputError { msg: message, .. } => message.as_str(),
            _ => "",
        };
        let marked = message.starts_with(SQLITE_MARK);
        // SQLite says "not authorized" for a refused statement (SQLITE_AUTH)
        // and for a refused function call (a plain SQLITE_ERROR).
        let refused = error.sqlite_error_code() == Some(AuthorizationForStatementDenied)
            || message.starts_with("not authorized");
        match error.sqlite_error_code() {
            _ if marked => take().unwrap_or(LabError::InjectedFault("at a checkpoint")),
            _ if refused => match take() {
                Some(refusal @ LabError::NotAllowed(_)) => refusal,
                _ => LabError::NotAllowed(message.to_owned()),
            },
            Some(DatabaseBusy | DatabaseLocked) => LabError::Contention,
            // "CHECK constraint failed: request_id_length"
            Some(rusqlite::ErrorCode::ConstraintViolation)
                if message.ends_with(crate::REQUEST_ID_LENGTH) =>
            {
                LabError::RequestIdTooLong
            }
            _ => LabError::Database(error),
        }
    }
}

#[cfg(feature = "postgres")]
impl From<postgres::Error> for LabError {
    /// A lock not granted at once (55P03) or a deadlock (40P01) is
    /// [`LabError::Contention`]; a serialization failure (40001) is
    /// [`LabError::SerializationFailure`]. Neither judged the request.
    fn from(error: postgres::Error) -> Self {
        use postgres::error::SqlState;
        // A fault a test injected at a checkpoint comes back as itself.
        if error.code().is_some_and(|code| code.code() == SERVER_CODE) {
            return take_from_server().unwrap_or(LabError::InjectedFault("at a checkpoint"));
        }
        match error.code() {
            Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => LabError::Contention,
            Some(code) if *code == SqlState::T_R_DEADLOCK_DETECTED => LabError::Contention,
            Some(code) if *code == SqlState::T_R_SERIALIZATION_FAILURE => {
                LabError::SerializationFailure
            }
            Some(code)
                if *code == SqlState::CHECK_VIOLATION
                    && error
                        .as_db_error()
                        .and_then(|db| db.constraint())
                        .is_some_and(|name| name == crate::REQUEST_ID_LENGTH) =>
            {
                LabError::RequestIdTooLong
            }
            Some(code) if *code == SqlState::INSUFFICIENT_PRIVILEGE => LabError::PermissionDenied(
                error
                    .as_db_error()
                    .map_or_else(|| error.to_string(), |db| db.message().to_owned()),
            ),
            _ => LabError::Postgres(error),
        }
    }
}
