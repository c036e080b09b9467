//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: the generation is read and written with the learner's own SQL
//! through `tx.sql()` instead of `installed_generation` and `set_generation`.
//! Still correct: the read and the write run in one IMMEDIATE transaction, so no other writer
//! can move the generation between them; equal or lower is refused with the installed number.
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
    let installed: i64 = tx
        .sql()
        .query_row(
            "SELECT generation FROM resources WHERE name = ?1",
            params![resource],
            |row| row.get(0),
        )
        .optional()?
        .ok_or_else(|| LabError::UnknownResource(resource.to_owned()))?;
    if new_generation <= installed {
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }
    tx.sql().execute(
        "UPDATE resources SET generation = ?1 WHERE name = ?2",
        params![new_generation, resource],
    )?;
    tx.commit()
}
