//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the decisions live in small helper functions. Validation,
//! the generation rule and the replay rule each return a `Result` that `apply` unwraps with
//! `?`; the replay helper answers `Ok(Some(outcome))` for a replay and `Ok(None)` for a new
//! request; the new value comes from a helper that maps `checked_add` to the typed error.
//! Still correct: the helpers are called in the reference's order, inside the same IMMEDIATE
//! transaction; every error leaves through `?`, which drops (rolls back) the transaction.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;

use crate::{Destination, LabError, Outcome, Record, Tx};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    validate(generation, request_id)?;
    let tx = db.begin(TransactionBehavior::Immediate)?;
    judge_generation(generation, tx.installed_generation(resource)?)?;
    if let Some(replay) = replay(&tx, resource, request_id, delta)? {
        return Ok(replay);
    }
    let result = add(tx.value(resource)?, delta)?;
    tx.set_value(resource, result)?;
    tx.insert_record(&Record {
        resource: resource.to_owned(),
        request_id: request_id.to_owned(),
        delta,
        result,
        generation,
    })?;
    tx.commit()?;
    Ok(Outcome::Applied { result })
}

/// Refuses what can be refused without the database.
fn validate(generation: i64, request_id: &str) -> Result<(), LabError> {
    if request_id.is_empty() {
        Err(LabError::EmptyRequestId)
    } else if generation < 1 {
        Err(LabError::GenerationBelowOne(generation))
    } else {
        Ok(())
    }
}

/// Only the installed generation may act.
fn judge_generation(presented: i64, installed: i64) -> Result<(), LabError> {
    if presented < installed {
        Err(LabError::Stale {
            presented,
            installed,
        })
    } else if presented > installed {
        Err(LabError::NeverIssued {
            presented,
            installed,
        })
    } else {
        Ok(())
    }
}

/// The stored answer to a request seen before, a conflict, or `None` for a
/// new request.
fn replay(
    tx: &Tx<'_>,
    resource: &str,
    request_id: &str,
    delta: i64,
) -> Result<Option<Outcome>, LabError> {
    let Some(record) = tx.find_record(resource, request_id)? else {
        return Ok(None);
    };
    if record.delta == delta {
        Ok(Some(Outcome::Replayed {
            result: record.result,
        }))
    } else {
        Err(LabError::Conflict {
            request_id: request_id.to_owned(),
            recorded_delta: record.delta,
            presented_delta: delta,
        })
    }
}

/// The new value, or the typed overflow.
fn add(value: i64, delta: i64) -> Result<i64, LabError> {
    value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })
}
