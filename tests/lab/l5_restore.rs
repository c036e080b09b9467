//! L5.4: a restore of an old generation re-admits its holders, on a
//! destination whose schema has no rule against it. (On the SQL functions'
//! track, L8.3 shows the rule that refuses it.)

use fencing_lab::scenes::l5;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL. `super` is that
// destination's module, so `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// A bad recovery restores generation 1: its holders are accepted again,
/// and the holder of 2 is now "never issued".
#[rstest]
fn l5_4_restoring_an_old_generation_accepts_its_requests_again(lab: Lab) {
    let c = claim("L5.4");
    c.run(l5::restoring_an_old_generation(&c, &lab));
}
