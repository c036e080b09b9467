//! NOT A MUTANT: a correct alternative to the PostgreSQL reference.
//! Changed from the reference: no `lock_row`, no read before the write, no `set_generation`.
//! One conditional `UPDATE … WHERE generation < $1` of its own, through `tx.sql()`, compares
//! and writes in one statement; only when it changed nothing does a read say why.
//! Why it is still correct: the `UPDATE` locks the row (NOWAIT-fast, under the session's 1 ms
//! lock timeout) before it checks the condition on the row's latest version, so the comparison
//! and the write see the same installed generation, and a held row is contention, as in the
//! reference. The graded suite must give it full marks on the PostgreSQL track (see
//! tests/class-postgres/gradebook.csv): its write reaches the checkpoint in the server.

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
    if changed == 0 {
        // Nothing written: an unknown resource, or a generation not higher.
        let installed = tx.installed_generation(resource)?;
        return Err(LabError::NotHigher {
            requested: new_generation,
            installed,
        });
    }
    tx.commit()
}
