//! MUTANT (PostgreSQL track): the generation checked in one transaction, the effect written in a
//! second.
//! Changed from the reference: the row lock and the generation check commit on their own; a new
//! transaction locks the row again and looks up the record and writes, without checking the
//! generation again. An install can commit between the two, and the effect follows it under the
//! old decision. Each transaction holds its row lock, so no pause finds the row free.
//! The graded suite must fail it (L3.2: the server names two transactions; see
//! staff/class-postgres/gradebook.csv).

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

    let mut check = db.begin()?;
    check.lock_row(resource)?;
    let installed = check.installed_generation(resource)?;
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
    check.commit()?;

    let mut tx = db.begin()?;
    tx.lock_row(resource)?;
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
