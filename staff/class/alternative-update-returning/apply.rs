//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the arithmetic is done in SQL. One statement of the learner's
//! own, `UPDATE resources SET value = value + ?1 … RETURNING value`, adds the delta and returns
//! the new value; its `WHERE` refuses an addition whose result SQLite would turn into a REAL
//! (what SQLite does on integer overflow), and then the value is read for the typed `Overflow`
//! error. The record goes in with `INSERT … RETURNING result`, and apply answers with the result the
//! record holds.
//! Still correct: every check precedes the write in one IMMEDIATE transaction, the overflow is
//! the same typed error with the same numbers and changes nothing, and the value and the
//! record commit together.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;
use crate::sql::{OptionalExtension, params};

use crate::{Destination, LabError, Outcome};

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

    // The addition happens in the database; an overflowing sum would be a
    // REAL there, so the row is only updated while the sum stays an integer.
    let result: Option<i64> = tx
        .sql()
        .query_row(
            "UPDATE resources SET value = value + ?1
             WHERE name = ?2 AND typeof(value + ?1) = 'integer'
             RETURNING value",
            params![delta, resource],
            |row| row.get(0),
        )
        .optional()?;
    let Some(result) = result else {
        let value = tx.value(resource)?;
        return Err(LabError::Overflow { value, delta });
    };

    let stored: i64 = tx.sql().query_row(
        "INSERT INTO requests (resource, request_id, delta, result, generation)
         VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING result",
        params![resource, request_id, delta, result, generation],
        |row| row.get(0),
    )?;
    tx.commit()?;
    Ok(Outcome::Applied { result: stored })
}
