//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: every statement is the learner's own SQL through `tx.sql()`, with
//! its own row mapping: the generation read, the record lookup (`SELECT delta, result FROM
//! requests`, mapped to a small struct of its own), the value read, the value write and the
//! record insert. Only `begin` and `commit` come from the harness.
//! Still correct: the statements run in one IMMEDIATE transaction in the reference's order
//! (generation, record, value, writes), a missing resource row is the unknown resource, and
//! the value and the record commit together.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;
use crate::sql::{OptionalExtension, params};

use crate::{Destination, LabError, Outcome};

/// What this solution needs from a stored request.
struct Seen {
    delta: i64,
    result: i64,
}

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut Destination,
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

    let tx = db.begin(TransactionBehavior::Immediate)?;
    let conn = tx.sql();

    let installed: i64 = conn
        .query_row(
            "SELECT generation FROM resources WHERE name = ?1",
            params![resource],
            |row| row.get(0),
        )
        .optional()?
        .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))?;
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

    let seen = conn
        .query_row(
            "SELECT delta, result FROM requests WHERE resource = ?1 AND request_id = ?2",
            params![resource, request_id],
            |row| {
                Ok(Seen {
                    delta: row.get("delta")?,
                    result: row.get("result")?,
                })
            },
        )
        .optional()?;
    if let Some(seen) = seen {
        if seen.delta != delta {
            return Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta: seen.delta,
                presented_delta: delta,
            });
        }
        return Ok(Outcome::Replayed {
            result: seen.result,
        });
    }

    let value: i64 = conn.query_row(
        "SELECT value FROM resources WHERE name = ?1",
        params![resource],
        |row| row.get(0),
    )?;
    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;
    conn.execute(
        "UPDATE resources SET value = ?1 WHERE name = ?2",
        params![result, resource],
    )?;
    conn.execute(
        "INSERT INTO requests (resource, request_id, delta, result, generation)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![resource, request_id, delta, result, generation],
    )?;
    tx.commit()?;
    Ok(Outcome::Applied { result })
}
