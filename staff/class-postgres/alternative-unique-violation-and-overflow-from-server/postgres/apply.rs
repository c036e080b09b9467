//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: the record is not looked up first. Under a savepoint, the value
//! moves with `UPDATE … SET value = value + $1 RETURNING value`, so the server detects an overflow
//! (SQLSTATE 22003), and the record goes in with its own `INSERT`, so the primary key detects a
//! request seen before (23505). Either refusal rolls back to the savepoint, and only then is the
//! record read: found, it answers the replay or the conflict; missing after 22003, the overflow.
//! Why it is still correct: the row is locked and the generation checked first, as in the
//! reference; the savepoint undoes the attempt's writes, so a replay or a conflict changes
//! nothing, and a request seen before is answered from its record even when its delta no longer
//! fits. Rolling back to the savepoint keeps the row lock taken before it (though the row was
//! updated after it), so the record is read and answered under the lock the check was made under.
//! It compiles only with `crate::pg::sql`'s names (`SqlState`, `Error`). The graded suite must
//! give it full marks on the PostgreSQL track (see staff/class-postgres/gradebook.csv).

use crate::pg::sql::{Error, SqlState};
use crate::pg::{PgDestination, PgTx};
use crate::{LabError, Outcome};

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
    tx.lock_row(resource)?;
    let installed = tx.installed_generation(resource)?;
    if generation != installed {
        return Err(if generation < installed {
            LabError::Stale {
                presented: generation,
                installed,
            }
        } else {
            LabError::NeverIssued {
                presented: generation,
                installed,
            }
        });
    }

    // After a refused statement the server takes no other until the
    // transaction rolls back to a point before it.
    tx.sql().execute("SAVEPOINT attempt", &[])?;
    let refused = match attempt(&mut tx, resource, generation, request_id, delta) {
        Ok(result) => {
            tx.commit()?;
            return Ok(Outcome::Applied { result });
        }
        Err(error)
            if error.code() == Some(&SqlState::UNIQUE_VIOLATION)
                || error.code() == Some(&SqlState::NUMERIC_VALUE_OUT_OF_RANGE) =>
        {
            error
        }
        // Contention, a fault, anything else: the lab's error for it.
        Err(error) => return Err(error.into()),
    };
    tx.sql().execute("ROLLBACK TO SAVEPOINT attempt", &[])?;

    match tx.find_record(resource, request_id)? {
        Some(record) if record.delta != delta => Err(LabError::Conflict {
            request_id: request_id.to_owned(),
            recorded_delta: record.delta,
            presented_delta: delta,
        }),
        Some(record) => Ok(Outcome::Replayed {
            result: record.result,
        }),
        None if refused.code() == Some(&SqlState::NUMERIC_VALUE_OUT_OF_RANGE) => {
            let value = tx.value(resource)?;
            Err(LabError::Overflow { value, delta })
        }
        // A unique violation without a record of this request is not a
        // duplicate of it: the server's error, as it came.
        None => Err(refused.into()),
    }
}

/// The effect and the record, each refused by the server when it must be:
/// the addition when it does not fit in a `bigint`, the record when its
/// primary key is taken.
fn attempt(
    tx: &mut PgTx<'_>,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<i64, Error> {
    let mut sql = tx.sql();
    let result: i64 = sql
        .query_one(
            "UPDATE resources SET value = value + $1 WHERE name = $2 RETURNING value",
            &[&delta, &resource],
        )?
        .get(0);
    sql.execute(
        "INSERT INTO requests (resource, request_id, delta, result, generation)
         VALUES ($1, $2, $3, $4, $5)",
        &[&resource, &request_id, &delta, &result, &generation],
    )?;
    Ok(result)
}
