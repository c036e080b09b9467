//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: no `lock_row` and no separate read before the write. One
//! conditional statement of the learner's own through `tx.sql()`, `UPDATE resources SET
//! generation = $1 WHERE name = $2 AND generation < $1`, compares and writes at once; when it
//! changed no row, the row is read for the error's numbers.
//! Still correct: an UPDATE locks the row it changes and, under READ COMMITTED, evaluates its
//! `WHERE` against the latest committed version once it has the lock, so no other install or
//! apply can slip between the comparison and the write; a row locked elsewhere fails at the
//! session's lock timeout (55P03), which reaches the caller as contention.
//! The graded suite must give it full marks on both tracks (see
//! tests/class-postgres/gradebook.csv).

use crate::LabError;
use crate::pg::PgDestination;

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
pub fn install_generation(
    db: &mut PgDestination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    if new_generation < 1 {
        return Err(LabError::GenerationBelowOne(new_generation));
    }
    let mut tx = db.begin()?;
    let changed = tx.sql().execute(
        "UPDATE resources SET generation = $1 WHERE name = $2 AND generation < $1",
        &[&new_generation, &resource],
    )?;
    if changed > 0 {
        return tx.commit();
    }
    let installed: Option<i64> = tx
        .sql()
        .query_opt(
            "SELECT generation FROM resources WHERE name = $1",
            &[&resource],
        )?
        .map(|row| row.get(0));
    match installed {
        Some(installed) => Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        }),
        None => Err(LabError::UnknownResource(resource.to_owned())),
    }
}
