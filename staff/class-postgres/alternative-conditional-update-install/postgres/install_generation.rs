//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: the install is one conditional `UPDATE … WHERE generation < $1` of
//! its own through `tx.sql()`, with a check of how many rows it changed; only when it changed
//! none does it read the installed generation, to say why.
//! Why it is still correct: the comparison and the write are one statement, which locks the row
//! before it compares: nothing can come between them. The graded suite must give it full marks on
//! the PostgreSQL track (see staff/class-postgres/gradebook.csv): the read checkpoint fires right
//! after the statement, with the row still locked by it.

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
    if changed == 1 {
        return tx.commit();
    }
    let installed = tx.installed_generation(resource)?;
    Err(LabError::NotHigher {
        requested: new_generation,
        installed,
    })
}
