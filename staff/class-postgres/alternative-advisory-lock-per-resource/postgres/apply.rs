//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: instead of the row lock, both functions take a transaction-level
//! advisory lock per resource, keyed by the lab's `resources` table and the resource's name
//! (`pg_advisory_xact_lock('resources'::regclass::oid::int, hashtext(name))`), and read the
//! generation with a plain read.
//! Why it is still correct: every install and every apply of a resource takes the same advisory
//! lock before it reads, and keeps it to the commit, so no install comes between apply's check and
//! its effect; the 1 ms lock timeout makes a taken one contention. The table's oid in the key keeps
//! two labs on one server apart (a key made of the name alone would collide with another test's
//! fund-A). The graded suite must give it full marks on the PostgreSQL track (see
//! staff/class-postgres/gradebook.csv): L3 is judged by what the lock keeps out.

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
    tx.sql().execute(
        "SELECT pg_advisory_xact_lock('resources'::regclass::oid::int, hashtext($1))",
        &[&resource],
    )?;
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
