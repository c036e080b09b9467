//! L8: the destination enforces the contract itself. Each test runs its
//! scene (`src/scenes/l8.rs`), the one the story tells.

use fencing_lab::scenes::l8;
use rstest::rstest;

use super::{Lab, claim, lab};

/// The worker's own UPDATE of the value is refused by the database; through
/// apply, its request is judged and lands.
#[rstest]
fn l8_1_a_workers_own_update_is_refused_by_the_database(lab: Lab) {
    let c = claim("L8.1");
    c.run(l8::worker_cannot_write_around(&c, &lab));
}

/// A worker's call of install_generation is refused; the authority's
/// installs.
#[rstest]
fn l8_2_only_the_authority_installs(lab: Lab) {
    let c = claim("L8.2");
    c.run(l8::only_the_authority_installs(&c, &lab));
}

/// A restore of an old generation, even by the tables' owner, is refused by
/// a rule of the schema; a higher install still lands.
#[rstest]
fn l8_3_a_generation_never_goes_backwards(lab: Lab) {
    let c = claim("L8.3");
    c.run(l8::generation_never_goes_back(&c, &lab));
}

/// The owner can lift the rules and write around apply, and an external
/// call inside apply is not undone by its rollback.
#[rstest]
fn l8_4_what_stays_open_is_shown(lab: Lab) {
    let c = claim("L8.4");
    c.run(l8::what_stays_open(&c, &lab));
}

/// With the worker's own temporary relations named resources and requests
/// in place, its stale request is still refused and changes nothing; its
/// current one lands in the lab's tables.
#[rstest]
fn l8_5_the_worker_cannot_redirect_the_functions(lab: Lab) {
    let c = claim("L8.5");
    c.run(l8::worker_cannot_redirect(&c, &lab));
}

/// The authority's call of apply and its own writes of the tables are
/// refused and change nothing; its install still lands.
#[rstest]
fn l8_6_the_authority_may_install_and_nothing_else(lab: Lab) {
    let c = claim("L8.6");
    c.run(l8::authority_only_installs(&c, &lab));
}
