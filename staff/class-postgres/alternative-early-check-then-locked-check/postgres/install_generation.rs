//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: a first, unlocked transaction turns an equal or lower generation
//! away early; then the reference's transaction locks the row and compares again.
//! Why it is still correct: the comparison that counts is made under the row lock, in the
//! transaction that writes. The graded suite must give it full marks on the PostgreSQL track (see
//! staff/class-postgres/gradebook.csv).

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
    let mut early = db.begin()?;
    let installed = early.installed_generation(resource)?;
    early.commit()?;
    if new_generation <= installed {
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }

    let mut tx = db.begin()?;
    tx.lock_row(resource)?;
    let installed = tx.installed_generation(resource)?;
    if new_generation <= installed {
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }
    tx.set_generation(resource, new_generation)?;
    tx.commit()
}
