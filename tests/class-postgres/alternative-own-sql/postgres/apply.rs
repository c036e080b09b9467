//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: every statement is the learner's own SQL through `tx.sql()`.
//! One `SELECT generation, value … FOR UPDATE NOWAIT` locks the resource's row and reads both
//! columns at once (the reference calls `lock_row`, then `installed_generation`, later
//! `value`); the record lookup is `SELECT delta, result FROM requests` with its own row
//! mapping; the value and the record are written with a plain `UPDATE` and `INSERT`.
//! Still correct: the row is locked by the very statement that reads the generation, so no
//! install can change it before the commit; a lock held elsewhere fails at once (55P03) and
//! reaches the caller as contention; the generation is judged before the record, the value
//! read early is used only for a new request, and the value and the record commit together.
//! The graded suite must give it full marks on both tracks (see
//! tests/class-postgres/gradebook.csv).

use crate::pg::PgDestination;
use crate::{LabError, Outcome};

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
    let sql = tx.sql();

    let row = sql
        .query_opt(
            "SELECT generation, value FROM resources WHERE name = $1 FOR UPDATE NOWAIT",
            &[&resource],
        )?
        .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))?;
    let installed: i64 = row.get("generation");
    let value: i64 = row.get("value");

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

    let seen = sql.query_opt(
        "SELECT delta, result FROM requests WHERE resource = $1 AND request_id = $2",
        &[&resource, &request_id],
    )?;
    if let Some(seen) = seen {
        let (recorded_delta, result): (i64, i64) = (seen.get(0), seen.get(1));
        if recorded_delta != delta {
            return Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta,
                presented_delta: delta,
            });
        }
        return Ok(Outcome::Replayed { result });
    }

    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;
    sql.execute(
        "UPDATE resources SET value = $1 WHERE name = $2",
        &[&result, &resource],
    )?;
    sql.execute(
        "INSERT INTO requests (resource, request_id, delta, result, generation)
         VALUES ($1, $2, $3, $4, $5)",
        &[&resource, &request_id, &delta, &result, &generation],
    )?;
    tx.commit()?;
    Ok(Outcome::Applied { result })
}
