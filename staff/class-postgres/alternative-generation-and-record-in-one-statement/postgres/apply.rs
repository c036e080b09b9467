//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: one statement of its own locks the row and reads the generation and
//! the request's record together (`resources` joined with `requests`, `FOR UPDATE OF r NOWAIT`),
//! and the record is used only once the generation has passed.
//! Why it is still correct: the record is read under the row lock, in the transaction that writes,
//! and judged after the generation, as in the reference. The graded suite must give it full marks
//! on the PostgreSQL track (see staff/class-postgres/gradebook.csv): the server's plan shows both
//! reads, and both read checkpoints fire right after the statement.

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
    let Some(row) = tx.sql().query_opt(
        "SELECT r.generation, q.delta, q.result
           FROM resources r
           LEFT JOIN requests q ON q.resource = r.name AND q.request_id = $2
          WHERE r.name = $1
            FOR UPDATE OF r NOWAIT",
        &[&resource, &request_id],
    )?
    else {
        return Err(LabError::UnknownResource(resource.to_owned()));
    };
    let installed: i64 = row.get(0);
    let recorded: Option<(i64, i64)> = row
        .get::<_, Option<i64>>(1)
        .zip(row.get::<_, Option<i64>>(2));
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
    if let Some((recorded_delta, result)) = recorded {
        if recorded_delta != delta {
            return Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta,
                presented_delta: delta,
            });
        }
        return Ok(Outcome::Replayed { result });
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
