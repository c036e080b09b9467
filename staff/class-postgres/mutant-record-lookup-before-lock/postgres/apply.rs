//! MUTANT (PostgreSQL track): the record looked up in a transaction of its own, before the one
//! that takes the row lock.
//! Changed from the reference: `find_record` runs in a first transaction; the row lock, the
//! generation check and the writes come in a second. Two copies of one request sent at once both
//! find no record, and the second to write gets a primary-key error instead of the original result.
//! The graded suite must fail it (L4.10; see staff/class-postgres/gradebook.csv).

use crate::pg::PgDestination;
use crate::{LabError, Outcome, Record};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut PgDestination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    let mut lookup = db.begin()?;
    let existing = lookup.find_record(resource, request_id)?;
    lookup.commit()?;

    let mut tx = db.begin()?;
    tx.lock_row(resource)?;
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
    if let Some(record) = existing {
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
