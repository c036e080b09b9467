//! MUTANT: no transaction at all.
//! Changed from the reference: every statement runs in a transaction of its own, as autocommit would: nothing holds the lock from the check to the effect, and the record is not written with the value.
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
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }
    let installed = {
        let step = db.begin(TransactionBehavior::Deferred)?;
        let installed = step.installed_generation(resource)?;
        step.commit()?;
        installed
    };
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
    let found = {
        let step = db.begin(TransactionBehavior::Deferred)?;
        let found = step.find_record(resource, request_id)?;
        step.commit()?;
        found
    };
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
    let value = {
        let step = db.begin(TransactionBehavior::Deferred)?;
        let value = step.value(resource)?;
        step.commit()?;
        value
    };
    let result = value
        .checked_add(delta)
        .ok_or(LabError::Overflow { value, delta })?;
    {
        let step = db.begin(TransactionBehavior::Deferred)?;
        step.set_value(resource, result)?;
        step.commit()?;
    }
    {
        let step = db.begin(TransactionBehavior::Deferred)?;
        step.insert_record(&Record {
            resource: resource.to_owned(),
            request_id: request_id.to_owned(),
            delta,
            result,
            generation,
        })?;
        step.commit()?;
    }
    Ok(Outcome::Applied { result })
}
