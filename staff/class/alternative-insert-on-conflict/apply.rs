//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the record is the deduplication check itself. After the
//! generation check, the learner's own `INSERT … ON CONFLICT (resource, request_id) DO NOTHING
//! RETURNING result` through `tx.sql()` tries to store the request; only when it stored
//! nothing is the existing record read, to answer the replay or the conflict. The value is
//! written after the record, with `set_value`.
//! Still correct: the insert and the value write are in one IMMEDIATE transaction and commit
//! together; a replay or a conflict writes nothing (the insert did nothing, and the
//! transaction is dropped); an addition that would overflow is checked before the insert, and
//! then only a request never seen before is the typed overflow, a replay is still a replay.
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

    let value = tx.value(resource)?;
    let stored = match value.checked_add(delta) {
        // No new value exists; a request seen before still gets its answer.
        None => None,
        Some(result) => tx
            .sql()
            .query_row(
                "INSERT INTO requests (resource, request_id, delta, result, generation)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (resource, request_id) DO NOTHING
                 RETURNING result",
                params![resource, request_id, delta, result, generation],
                |row| row.get::<_, i64>(0),
            )
            .optional()?,
    };

    let Some(result) = stored else {
        // Nothing was inserted: the request was seen before, or overflows.
        return match tx.find_record(resource, request_id)? {
            Some(record) if record.delta == delta => Ok(Outcome::Replayed {
                result: record.result,
            }),
            Some(record) => Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta: record.delta,
                presented_delta: delta,
            }),
            None => Err(LabError::Overflow { value, delta }),
        };
    };

    tx.set_value(resource, result)?;
    tx.commit()?;
    Ok(Outcome::Applied { result })
}
