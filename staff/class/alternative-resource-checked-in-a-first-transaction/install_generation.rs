//! NOT A MUTANT: a correct alternative to the reference (see apply.rs).
//! Changed from the reference: a first, read-only transaction refuses an unknown resource; the
//! reference's transaction then compares and writes.

use crate::TransactionBehavior;

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
    // Is there such a resource at all? Asked without the write lock.
    {
        let look = db.begin(TransactionBehavior::Deferred)?;
        look.value(resource)?;
        look.commit()?;
    }
    // Take the write lock before reading, like `apply`: the comparison and
    // the write must see the same installed generation.
    let tx = db.begin(TransactionBehavior::Immediate)?;
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
