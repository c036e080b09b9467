//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: different control flow: the comparison is a `match` on
//! `Ordering` and the write happens in its `Greater` arm, with no early return.
//! Still correct: equal and lower are refused with the installed number, the read and the
//! write share one IMMEDIATE transaction.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use std::cmp::Ordering;

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
    let tx = db.begin(TransactionBehavior::Immediate)?;
    let installed = tx.installed_generation(resource)?;
    match new_generation.cmp(&installed) {
        Ordering::Greater => {
            tx.set_generation(resource, new_generation)?;
            tx.commit()
        }
        Ordering::Equal | Ordering::Less => Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        }),
    }
}
