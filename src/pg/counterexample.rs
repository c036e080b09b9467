//! The counterexamples on PostgreSQL: the same paths around the contract as
//! in [`crate::counterexample`], written as any other client of the server
//! would write them.

use crate::LabError;
use crate::checkpoint::Checkpoint;
use crate::pg::{PgDestination, PgLab};

/// The worker-side check: compare the held generation with the installed
/// one, and if they match, write a delta that carries no generation. The
/// check and the write are two statements, so an install that lands between
/// them (at [`Checkpoint::WorkerChecked`]) goes unnoticed. Returns the new
/// value.
pub fn unfenced_write(
    worker: &mut PgDestination,
    resource: &str,
    held_generation: i64,
    delta: i64,
) -> Result<i64, LabError> {
    let installed: i64 = worker
        .client()
        .query_one(
            "SELECT generation FROM resources WHERE name = $1",
            &[&resource],
        )?
        .get(0);
    if installed != held_generation {
        return Err(LabError::Stale {
            presented: held_generation,
            installed,
        });
    }
    worker.checkpoint(Checkpoint::WorkerChecked)?;
    Ok(worker
        .client()
        .query_one(
            "UPDATE resources SET value = value + $1 WHERE name = $2 RETURNING value",
            &[&delta, &resource],
        )?
        .get(0))
}

/// A direct SQL write that sets a value without `apply`: no generation is
/// checked, because nothing asks for one.
pub fn direct_sql_write(lab: &PgLab, resource: &str, value: i64) -> Result<(), LabError> {
    lab.connect()?.client().execute(
        "UPDATE resources SET value = $1 WHERE name = $2",
        &[&value, &resource],
    )?;
    Ok(())
}

/// A bad recovery: an old generation put back as the installed one.
pub fn restore_generation(lab: &PgLab, resource: &str, generation: i64) -> Result<(), LabError> {
    lab.connect()?.client().execute(
        "UPDATE resources SET generation = $1 WHERE name = $2",
        &[&generation, &resource],
    )?;
    Ok(())
}
