//! Reference: the authority installs a new generation, on PostgreSQL.

use crate::LabError;
use crate::pg::PgDestination;

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
pub fn install_generation(
    db: &mut PgDestination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    // L6:
    if new_generation < 1 {
        return Err(LabError::GenerationBelowOne(new_generation));
    }
    // L3:
    // Lock the row before reading, like `apply`: the comparison and the
    // write must see the same installed generation.
    let mut tx = db.begin()?;
    tx.lock_row(resource)?;
    // L1, L2, L5:
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
