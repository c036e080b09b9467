//! L3.2 and L3.3 between two transactions of one call: the moment right
//! after one of the call's transactions ended (its locks released, nothing
//! else started) is a checkpoint, and the authority installs there. Each
//! test runs its scene (`src/scenes/l3.rs`) on this module's destination:
//! SQLite here, PostgreSQL under `postgres::`.

use fencing_lab::scenes::l3;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL. `super` is that
// destination's module, so `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// An install made between two transactions of one apply is seen by the
/// apply's write: if nothing was written before it, the apply that
/// presented 1 is refused as stale and writes nothing. (A decision carried
/// from one transaction into the next applies under a generation that is
/// no longer installed.)
#[rstest]
fn l3_2_apply_decides_in_the_transaction_that_writes(lab: Lab) {
    let c = claim("L3.2");
    c.run(l3::apply_decides_where_it_writes(&c, &lab));
}

/// A higher install made between two transactions of one
/// install_generation is seen by its write: it is refused as not higher,
/// and the higher generation stays.
#[rstest]
fn l3_3_install_decides_in_the_transaction_that_writes(lab: Lab) {
    let c = claim("L3.3");
    c.run(l3::install_decides_where_it_writes(&c, &lab));
}
