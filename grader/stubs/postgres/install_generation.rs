//! PostgreSQL track, exercise 1 of 2: the authority installs a new
//! generation on a database server.
//!
//! Do the SQLite `exercises/install_generation.rs` first. Tools you have (see
//! `api/src/pg.rs`): `db.begin()` returns a `PgTx` with `lock_row`,
//! `installed_generation`, `set_generation` and `commit`.

use crate::LabError;
use crate::pg::PgDestination;

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
///
/// Claims: L2.4 (refuse equal or lower), L3.3 (lock the row like `apply`),
/// L6.1 (bad input changes nothing), and every claim where the authority
/// acts.
pub fn install_generation(
    db: &mut PgDestination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    // TODO: a generation below 1 is never valid.
    //
    // TODO: what must be locked, and before which read, so that no apply
    // and no other install slips between your comparison and your write?
    //
    // TODO: refuse with `LabError::NotHigher` unless the new generation is
    // strictly higher; write it; commit.
    let _ = (db, resource, new_generation);
    todo!("install_generation (postgres): decide the lock, the comparison and the order")
}
