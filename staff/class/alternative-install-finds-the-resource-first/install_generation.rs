//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: install_generation reads the installed generation (so an unknown
//! resource is refused) before it checks that the new generation is at least 1.
//! Still correct: both are refusals of bad input that change nothing; for input bad in both ways
//! no claim says which comes first.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use crate::TransactionBehavior;

use crate::{Destination, LabError};

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    // Take the write lock before reading, like `apply`: the comparison and
    // the write must see the same installed generation.
    let tx = db.begin(TransactionBehavior::Immediate)?;
    let installed = tx.installed_generation(resource)?;
    if new_generation < 1 {
        return Err(LabError::GenerationBelowOne(new_generation));
    }
    if new_generation <= installed {
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }
    tx.set_generation(resource, new_generation)?;
    tx.commit()
}
