//! What the harness holds, as the catalogue's facts
//! ([`crate::claims::facts`]): a call's answer taken from the value itself
//! (never from how it prints), the observer's state and records. Below the
//! scenes and both destinations, which all hand their steps over as these.

use crate::claims::facts::{Answer, Observed, Recorded};
use crate::{LabError, Outcome, Record, State};

/// What a call of `apply` was answered, as a fact: its kind and numbers,
/// taken from the value itself, never from how it prints.
pub fn answer(result: &Result<Outcome, LabError>) -> Answer {
    match result {
        Ok(Outcome::Applied { result }) => Answer::Applied(*result),
        Ok(Outcome::Replayed { result }) => Answer::Replayed(*result),
        Err(error) => refusal(error),
    }
}

/// What a call of `install_generation` was answered, as a fact.
pub fn install_answer(result: &Result<(), LabError>) -> Answer {
    match result {
        Ok(()) => Answer::Installed,
        Err(error) => refusal(error),
    }
}

/// An error as a fact: the kind of refusal or failure it is.
pub fn refusal(error: &LabError) -> Answer {
    match error {
        LabError::Stale {
            presented,
            installed,
        } => Answer::Stale(Some((*presented, *installed))),
        LabError::NeverIssued {
            presented,
            installed,
        } => Answer::NeverIssued(Some((*presented, *installed))),
        LabError::NotHigher { .. } => Answer::NotHigher,
        LabError::Conflict { .. } => Answer::Conflict,
        LabError::UnknownResource(_) => Answer::Unknown,
        LabError::EmptyRequestId | LabError::GenerationBelowOne(_) => Answer::BadInput,
        LabError::RequestIdTooLong => Answer::IdTooLong,
        LabError::Overflow { .. } => Answer::Overflow,
        LabError::Contention | LabError::SerializationFailure => Answer::Contention,
        LabError::NotAllowed(_) => Answer::NotAllowed,
        LabError::InjectedFault(_) => Answer::Fault,
        LabError::NotImplemented { .. } => Answer::NotImplemented,
        LabError::Panicked { .. } => Answer::Panicked,
        LabError::Database(source) => database(&source.to_string()),
        #[cfg(feature = "postgres")]
        LabError::Postgres(_) => database(&crate::describe_error(error)),
        _ => Answer::Other,
    }
}

/// A database's failure: a second row with the same key, or another.
fn database(message: &str) -> Answer {
    let message = message.to_lowercase();
    if message.contains("unique constraint") || message.contains("duplicate key") {
        Answer::DuplicateKey
    } else {
        Answer::DatabaseError
    }
}

/// The observer's view of a resource, as a fact.
pub fn state_fact(state: &State) -> Observed {
    Observed::State {
        generation: state.generation,
        value: state.value,
    }
}

/// Records the observer read, as facts: each request id as stored.
pub fn records_fact(records: &[Record]) -> Observed {
    Observed::records(
        records
            .iter()
            .map(|record| Recorded {
                resource: record.resource.clone(),
                request_id: record.request_id.clone(),
                delta: record.delta,
                result: record.result,
                generation: record.generation,
            })
            .collect(),
    )
}
