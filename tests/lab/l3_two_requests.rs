//! L3.8: two different requests on one resource at once, each paused at
//! each of its checkpoints while the other runs to its end. The test runs
//! its scene (`src/scenes/l3.rs`) on this module's destination: SQLite
//! here, PostgreSQL under `postgres::`.

use fencing_lab::scenes::l3;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// r1 (+5) and r2 (+10) from the same value: whichever is paused, wherever,
/// the answers fit one serial order and the value moves by 15.
#[rstest]
fn l3_8_two_requests_at_once_keep_both_effects(lab: Lab) {
    let c = claim("L3.8");
    c.run(l3::two_requests_at_once(&c, &lab));
}
