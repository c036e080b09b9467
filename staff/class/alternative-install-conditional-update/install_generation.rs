//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: one conditional statement of the learner's own through
//! `tx.sql()`, `UPDATE resources SET generation = ?1 WHERE name = ?2 AND generation < ?1`, makes
//! the comparison and the write at once; the number of rows it changed decides, and only when
//! it changed none is the row read, for the error's numbers (or to find the resource missing).
//! Still correct: the comparison is part of the write itself, inside an IMMEDIATE transaction,
//! so the error read sees the same generation the UPDATE refused; equal or lower changes
//! nothing and is `NotHigher` with the installed number.
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
    let tx = db.begin(TransactionBehavior::Immediate)?;
    let changed = tx.sql().execute(
        "UPDATE resources SET generation = ?1 WHERE name = ?2 AND generation < ?1",
        params![new_generation, resource],
    )?;
    if changed != 0 {
        return tx.commit();
    }
    // Nothing changed: either the resource is missing or its generation is
    // not lower. Read it for the error.
    let installed: Option<i64> = tx
        .sql()
        .query_row(
            "SELECT generation FROM resources WHERE name = ?1",
            params![resource],
            |row| row.get(0),
        )
        .optional()?;
    match installed {
        None => Err(LabError::UnknownResource(resource.to_owned())),
        Some(installed) => Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        }),
    }
}
