//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: no separate read before the write, so no IMMEDIATE either. In a
//! DEFERRED transaction, one conditional statement of the learner's own through `tx.sql()`,
//! `UPDATE resources SET generation = ?1 WHERE name = ?2 AND generation < ?1`, compares and
//! writes at once; when it changed no row, the row is read for the error's numbers.
//! Still correct: a single statement is atomic in SQLite, and an UPDATE takes the write lock
//! when it starts (busy at once when another writer holds it: contention), so nothing can land
//! between its comparison and its write. The read after a refused UPDATE runs under that same
//! lock and reports the generation the UPDATE saw.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;
use crate::sql::{OptionalExtension, params};

use crate::{Destination, LabError};

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    if new_generation < 1 {
        return Err(LabError::GenerationBelowOne(new_generation));
    }
    let tx = db.begin(TransactionBehavior::Deferred)?;
    let changed = tx.sql().execute(
        "UPDATE resources SET generation = ?1 WHERE name = ?2 AND generation < ?1",
        params![new_generation, resource],
    )?;
    if changed > 0 {
        return tx.commit();
    }
    let installed: Option<i64> = tx
        .sql()
        .query_row(
            "SELECT generation FROM resources WHERE name = ?1",
            params![resource],
            |row| row.get(0),
        )
        .optional()?;
    Err(match installed {
        Some(installed) => LabError::NotHigher {
            requested: new_generation,
            installed,
        },
        None => LabError::UnknownResource(resource.to_owned()),
    })
}
