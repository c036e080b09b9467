//! MUTANT: the record looked up before the write lock.
//! Changed from the reference: the record is looked up first, in a read-only DEFERRED transaction of its own; the IMMEDIATE transaction that writes checks the generation, then decides on that earlier lookup instead of looking again.
//! The graded suite must fail it (see staff/class/gradebook.csv).

use crate::TransactionBehavior;

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

    // Looking the record up is only a read: do it before taking the write
    // lock, so the lock is held for as short a time as possible.
    let seen = {
        let tx = db.begin(TransactionBehavior::Deferred)?;
        tx.find_record(resource, request_id)?
    };

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
    if let Some(record) = seen {
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
