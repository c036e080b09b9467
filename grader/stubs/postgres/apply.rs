//! PostgreSQL track, exercise 2 of 2: the destination applies a worker's
//! request, or refuses it, on a database server.
//!
//! Do the SQLite `exercises/apply.rs` first: the contract is the same. What
//! changes is the lock. Run `cargo test --features postgres` to see which
//! claims still fail. Tools you have (see `api/src/pg.rs`): `db.begin()`
//! returns a `PgTx` with `lock_row`, `installed_generation`, `find_record`,
//! `value`, `set_value`, `insert_record` and `commit`. Dropping a `PgTx`
//! without committing rolls it back and releases its row locks.

#[allow(unused_imports)] // you will need it
use crate::Record;
use crate::pg::PgDestination;
use crate::{LabError, Outcome};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`. Returns `Outcome::Applied` with the new value, or
/// `Outcome::Replayed` with the result the first apply returned.
///
/// Claims: the same as the SQLite `apply`, with L3.1 and L3.2 about the row
/// lock, L3.7 (the lock covers one row) and L1.4 (workers in other
/// processes).
pub fn apply(
    db: &mut PgDestination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    // TODO: refuse malformed input before touching the server, as in the
    // SQLite exercise.
    //
    // TODO: `db.begin()` starts a READ COMMITTED transaction, which locks
    // nothing by itself, and `installed_generation` is a plain read. What
    // stops an install from committing between your read and your write?
    // Which row do you lock, and when: before the read or after it?
    //
    // TODO: the comparison, the record, the overflow and the commit are the
    // SQLite exercise's decisions; they have not changed.
    //
    // Hint: `tx.lock_row` fails at once with `LabError::Contention` when
    // another transaction holds the row. Pass it through unchanged.
    let _ = (db, resource, generation, request_id, delta);
    todo!("apply (postgres): decide the lock, the comparison, the order and the record")
}
