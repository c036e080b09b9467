//! Exercise 1 of 2: the authority installs a new generation.
//!
//! Run `cargo test` to see which claims still fail; `cargo run` prints the
//! lab's story against your code. Tools you have (see `api/src/sqlite.rs`):
//! `db.begin(TransactionBehavior::…)` returns a `Tx` with
//! `installed_generation`, `set_generation` and `commit`. Dropping a `Tx`
//! without committing rolls it back.

#[allow(unused_imports)] // you will need these
use crate::TransactionBehavior;

use crate::{Destination, LabError};

/// Installs `new_generation` as the generation of `resource`, only if it is
/// strictly higher than the installed one.
///
/// Most claims install a generation through it before they judge `apply`
/// (`cargo grade --claims` lists them all); the ones about it alone are
/// L2.4 (refuse equal or lower), L3.3 (take the write lock like `apply`)
/// and L6.1 (bad input changes nothing).
pub fn install_generation(
    db: &mut Destination,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    // TODO: a generation below 1 is never valid. Which error says so?
    //
    // TODO: which transaction behavior? Another connection must not be able
    // to install (or apply) between your read and your write. What does
    // SQLite's DEFERRED lock at BEGIN, and what does IMMEDIATE?
    //
    // TODO: read the installed generation; refuse with `LabError::NotHigher`
    // unless the new one is strictly higher. An unknown resource is already
    // an error from `installed_generation`: let it through with `?`.
    //
    // TODO: write the new generation, then commit. What happens to your
    // write if you return early with `?` instead?
    //
    // What each test expects: `cargo grade --claims` lists the claims'
    // statements. A failing step asks you a question about what it saw;
    // `cargo grade --hint L4.9` (with the claim's id) tells you more.
    let _ = (db, resource, new_generation);
    todo!("install_generation: decide the transaction, the comparison and the order")
}
