//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: the new generation is written with an `UPDATE` of its own through
//! `tx.sql()` instead of `set_generation`, and the comparison is written the other way round.
//! Why it is still correct: the row is locked before the generation is read, so the comparison
//! and the write see the same installed generation. The graded suite must give it full marks on
//! the PostgreSQL track (see staff/class-postgres/gradebook.csv): its write reaches the
//! checkpoint in the server.

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
    tx.lock_row(resource)?;
    let installed = tx.installed_generation(resource)?;
    if installed >= new_generation {
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }
    tx.sql().execute(
        "UPDATE resources SET generation = $1 WHERE name = $2",
        &[&new_generation, &resource],
    )?;
    tx.commit()
}
