//! MUTANT: using the generation as the deduplication key.
//! Changed from the reference: the record is looked up by resource and generation, not by request id.
//! The graded suite must fail it (see staff/class/gradebook.csv).

use crate::TransactionBehavior;
use crate::sql::OptionalExtension;

use crate::{Destination, LabError, Outcome, Record};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    // Malformed requests are refused before the database is touched.
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    // IMMEDIATE takes the write lock now, before the generation is read, so
    // no install can land between the check below and the write.
    let tx = db.begin(TransactionBehavior::Immediate)?;

    // 1-2. The presented generation must be the installed one: lower lost its
    // authority, higher was never issued.
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
    let found = tx
        .sql()
        .query_row(
            "SELECT resource, request_id, delta, result, generation FROM requests
             WHERE resource = ?1 AND generation = ?2",
            crate::sql::params![resource, generation],
            |row| {
                Ok(Record {
                    resource: row.get(0)?,
                    request_id: row.get(1)?,
                    delta: row.get(2)?,
                    result: row.get(3)?,
                    generation: row.get(4)?,
                })
            },
        )
        .optional()?;
    if let Some(record) = found {
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
