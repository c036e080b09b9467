//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the value and the record are written with the learner's own SQL
//! through `tx.sql()` (an `UPDATE` and an `INSERT`) instead of `set_value` and `insert_record`.
//! Still correct: both statements run inside the same IMMEDIATE transaction, after every check,
//! and commit together; an `UPDATE` that changes no row is reported as the unknown resource.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;
use crate::sql::params;

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

    let value = tx.value(resource)?;
    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;

    // The learner's own statements for the effect and its record.
    let changed = tx.sql().execute(
        "UPDATE resources SET value = ?1 WHERE name = ?2",
        params![result, resource],
    )?;
    if changed == 0 {
        return Err(LabError::UnknownResource(resource.to_owned()));
    }
    tx.sql().execute(
        "INSERT INTO requests (resource, request_id, delta, result, generation)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![resource, request_id, delta, result, generation],
    )?;
    tx.commit()?;
    Ok(Outcome::Applied { result })
}
