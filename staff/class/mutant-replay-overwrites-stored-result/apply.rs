//! Mutant: a replay brings its record up to date: the record's result is
//! overwritten with the value now, and that is what the replay answers.
//! Serially, with no other actor, a replay after another request's effect
//! answers the later value (L4.2); the record no longer holds the first
//! result (issue 38: the same mistake as answering with the current value,
//! written through the record).

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
    // L6:
    // Malformed requests are refused before the database is touched.
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    // L3:
    // IMMEDIATE takes the write lock now, before the generation is read, so
    // no install can land between the check below and the write.
    let tx = db.begin(TransactionBehavior::Immediate)?;

    // L1, L2:
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

    // L4:
    // 3. Only a current holder learns whether its request was seen before.
    if let Some(record) = tx.find_record(resource, request_id)? {
        if record.delta != delta {
            return Err(LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta: record.delta,
                presented_delta: delta,
            });
        }
        let now = tx.value(resource)?;
        tx.sql().execute(
            "UPDATE requests SET result = ?1 WHERE resource = ?2 AND request_id = ?3",
            (now, resource, request_id),
        )?;
        tx.commit()?;
        return Ok(Outcome::Replayed { result: now });
    }

    // L3, L4, L5, L6:
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
