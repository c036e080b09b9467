//! Reference: the authority installs a new generation.

use crate::TransactionBehavior;

use crate::{Destination, LabError};

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    // L6:
    if new_generation < 1 {
        return Err(LabError::GenerationBelowOne(new_generation));
    }
    // L3:
    // Take the write lock before reading, like `apply`: the comparison and
    // the write must see the same installed generation.
    let tx = db.begin(TransactionBehavior::Immediate)?;
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
