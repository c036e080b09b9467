//! MUTANT (PostgreSQL track): the request id pasted into SQL.
//! Changed from the reference: the record is looked up by a statement of its own through
//! `tx.sql()`, with the request id pasted into its text instead of bound as a parameter. Every
//! id without a quote works; `x' OR '1'='1` finds another request's record, and a quote alone
//! is a syntax error (L4.11).
//! The graded suite must fail it (see staff/class-postgres/gradebook.csv).

use crate::pg::PgDestination;
use crate::pg::sql::Row;
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
    // L6:
    // Malformed requests are refused before the server is asked anything.
    if request_id.is_empty() {
        return Err(LabError::EmptyRequestId);
    }
    if generation < 1 {
        return Err(LabError::GenerationBelowOne(generation));
    }

    // L3:
    let mut tx = db.begin()?;
    // Lock the resource's row first: from here to the commit no install can
    // change its generation. Other resources stay free.
    tx.lock_row(resource)?;

    // L1, L2:
    // 1-2. The presented generation must be the installed one.
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
    // The record is looked up by a statement of its own, the id pasted in.
    let found: Option<Row> = tx.sql().query_opt(
        &format!(
            "SELECT delta, result FROM requests WHERE resource = $1 AND request_id = '{request_id}'"
        ),
        &[&resource],
    )?;
    if let Some(row) = found {
        let record = Record {
            resource: resource.to_owned(),
            request_id: request_id.to_owned(),
            delta: row.get(0),
            result: row.get(1),
            generation,
        };
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
