//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the two input checks come in the other order, the generation
//! below one before the empty request id.
//! Still correct: each bad input gets the same typed error as in the reference, before the
//! database is touched, and nothing changes. Only a request with both problems at once is
//! named by its other problem (`GenerationBelowOne` instead of `EmptyRequestId`); no claim says
//! which of two problems an error must name, and either refusal is typed and changes nothing.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;

use crate::{Destination, LabError, Outcome, Record};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    // Malformed requests are refused before the database is touched: the
    // generation first, then the request id.
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }

    // IMMEDIATE takes the write lock now, before the generation is read, so
    // no install can land between the check below and the write.
    let tx = db.begin(TransactionBehavior::Immediate)?;

    // 1-2. The presented generation must be the installed one: lower lost its
    // authority, higher was never issued.
    let installed = tx.installed_generation(resource)?;
    if generation < installed {
        return Err(LabError::Stale {
            presented: generation,
            installed,
        });
    }
    if generation > installed {
        return Err(LabError::NeverIssued {
            presented: generation,
            installed,
        });
    }

    // 3. Only a current holder learns whether its request was seen before.
    if let Some(record) = tx.find_record(resource, request_id)? {
        if record.delta != delta {
            return Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta: record.delta,
                presented_delta: delta,
            });
        }
        return Ok(Outcome::Replayed {
            result: record.result,
        });
    }

    // 4. The effect and its record commit together or not at all.
    let value = tx.value(resource)?;
    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;
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
