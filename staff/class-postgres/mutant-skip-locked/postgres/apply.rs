//! MUTANT (PostgreSQL track): going on without the row lock when another session holds it.
//! Changed from the reference: the row is locked with `FOR UPDATE SKIP LOCKED` and the answer is
//! not looked at, so when the row is taken apply reads the generation anyway and goes on to
//! write. The harness's 1 ms lock timeout turns that write into contention; a server that waits
//! would let it through once the install that held the row commits, under the old decision.
//! The graded suite must fail it (L3.1; see staff/class-postgres/gradebook.csv).

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

    let mut tx = db.begin()?;
    tx.sql().query(
        "SELECT 1 FROM resources WHERE name = $1 FOR UPDATE SKIP LOCKED",
        &[&resource],
    )?;
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
