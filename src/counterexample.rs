//! The counterexamples: paths that do not go through the contract, so the
//! contract cannot protect them. They are harness code, not exercises: the
//! lab runs them to show where the protection ends.

use rusqlite::named_params;

use crate::checkpoint::Checkpoint;
use crate::{Destination, Lab, LabError};

/// The worker-side check: the worker compares the generation it holds with
/// the installed one, and if they match, writes a delta that carries no
/// generation at all. Returns the new value.
///
/// The check and the write are two separate statements, so an install that
/// lands between them (at [`Checkpoint::WorkerChecked`]) goes unnoticed and
/// the stale write gets through. No pause is needed for that: the gap is
/// there however short it is.
pub fn unfenced_write(
    worker: &mut Destination,
    resource: &str,
    held_generation: i64,
    delta: i64,
) -> Result<i64, LabError> {
    let conn = worker.connection();
    // Prepared once per connection, like the statements of `Tx`, so the
    // benchmark compares the same kind of statement on both paths.
    let installed: i64 = conn
        .prepare_cached("SELECT generation FROM resources WHERE name = :name")?
        .query_row(named_params! { ":name": resource }, |row| row.get(0))?;
    if installed != held_generation {
        return Err(LabError::Stale {
            presented: held_generation,
            installed,
        });
    }
    worker.checkpoint(Checkpoint::WorkerChecked)?;
    let mut write = conn.prepare_cached(
        "UPDATE resources SET value = value + :delta WHERE name = :name RETURNING value",
    )?;
    let mut rows = write.query(named_params! { ":delta": delta, ":name": resource })?;
    let value = match rows.next()? {
        Some(row) => row.get(0)?,
        None => return Err(LabError::UnknownResource(resource.to_owned())),
    };
    // Step the statement to its end: outside a transaction it commits only
    // then, and a commit that meets contention is rolled back. Dropping it
    // after reading the row would report a value that never committed.
    rows.next()?;
    Ok(value)
}

/// A direct SQL write that sets a value without `apply`: an operator's fix,
/// a migration, a second service sharing the table. No generation is
/// checked, because nothing asks for one.
pub fn direct_sql_write(lab: &Lab, resource: &str, value: i64) -> Result<(), LabError> {
    let conn = lab.connect()?;
    conn.connection().execute(
        "UPDATE resources SET value = :value WHERE name = :name",
        named_params! { ":value": value, ":name": resource },
    )?;
    Ok(())
}

/// A bad recovery: state restored from an old backup puts an old generation
/// back as the installed one, so the holders of that old generation are
/// accepted again.
pub fn restore_generation(lab: &Lab, resource: &str, generation: i64) -> Result<(), LabError> {
    let conn = lab.connect()?;
    conn.connection().execute(
        "UPDATE resources SET generation = :generation WHERE name = :name",
        named_params! { ":generation": generation, ":name": resource },
    )?;
    Ok(())
}
