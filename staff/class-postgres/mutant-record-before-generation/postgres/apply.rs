//! MUTANT (PostgreSQL track): answering replays before checking the generation.
//! Changed from the reference: the record is looked up before the generation is compared, so a stale worker learns stored results.
//! The graded suite must fail it (see staff/class-postgres/gradebook.csv).

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
    // Malformed requests are refused before the server is asked anything.
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    let mut tx = db.begin()?;
    // Lock the resource's row first: from here to the commit no install can
    // change its generation. Other resources stay free.
    tx.lock_row(resource)?;

    if let Some(record) = tx.find_record(resource, request_id)? {
        return Ok(Outcome::Replayed {
            result: record.result,
        });
    }

    // 1-2. The presented generation must be the installed one.
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
