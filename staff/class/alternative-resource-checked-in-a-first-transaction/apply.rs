//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: a first, read-only transaction refuses an unknown resource (it
//! reads the value, not the generation) and commits; then the reference's IMMEDIATE transaction
//! decides and writes.
//! Still correct: every decision about the request is made in the transaction that writes, so
//! an install that lands between the two is seen there. Two transactions in one call are not a
//! mistake; carrying a decision from one into the next is (L3.2).
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
    // Malformed requests are refused before the database is touched.
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    // Is there such a resource at all? Asked without the write lock.
    {
        let look = db.begin(TransactionBehavior::Deferred)?;
        look.value(resource)?;
        look.commit()?;
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
