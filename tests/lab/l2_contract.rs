//! L2: an explicit contract per resource. Each test runs its scene
//! (`src/scenes/l2.rs`), the one the story tells.

use fencing_lab::scenes::l2;
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// Installing on fund-A says nothing about fund-B.
#[rstest]
fn l2_1_new_generation_on_fund_a_leaves_fund_b_at_1(lab: Lab) {
    let c = claim("L2.1");
    c.run(l2::resources_are_independent(&c, &lab));
}

/// A worker that invents 3 while 2 is installed is refused, and the refusal
/// says "never issued", not "stale".
#[rstest]
fn l2_2_invented_higher_generation_is_never_issued_not_stale(lab: Lab) {
    let c = claim("L2.2");
    c.run(l2::invented_generation_is_never_issued(&c, &lab));
}

/// Generations are numbers: across each digit boundary and at the top of
/// the range, the lower one is stale and the one past the installed one
/// was never issued. Compared as text, "10" is below "9".
#[rstest]
fn l2_2_generations_compare_as_numbers(lab: Lab) {
    let c = claim("L2.2");
    c.run(l2::generations_compare_as_numbers(&c, &lab));
}

/// The installed generation is accepted, and apply answers with the value
/// after the delta.
#[rstest]
#[case::first_generation(1, 5)]
#[case::negative_delta(1, -4)]
#[case::after_an_install(2, 5)]
fn l2_3_installed_generation_is_accepted_and_returns_the_new_value(
    lab: Lab,
    #[case] generation: i64,
    #[case] delta: i64,
) {
    let c = claim("L2.3");
    c.run(l2::installed_generation_is_accepted(
        &c, &lab, generation, delta,
    ));
}

/// The authority only moves forward.
#[rstest]
#[case::equal(2)]
#[case::lower(1)]
fn l2_4_install_refuses_an_equal_or_lower_generation(lab: Lab, #[case] again: i64) {
    let c = claim("L2.4");
    c.run(l2::install_only_moves_forward(&c, &lab, again));
}

/// The authority only moves forward in numbers, not in text: after 10,
/// 9 is lower; after 100, 99.
#[rstest]
fn l2_4_install_compares_generations_as_numbers(lab: Lab) {
    let c = claim("L2.4");
    c.run(l2::install_compares_numbers(&c, &lab));
}

/// An unknown resource is an error, for apply and for install, and nothing
/// is created for it.
#[rstest]
fn l2_5_unknown_resource_is_an_error_and_nothing_is_created(lab: Lab) {
    let c = claim("L2.5");
    c.run(l2::unknown_resource_is_an_error(&c, &lab));
}

/// The authority promised generation 2 to worker B but has not installed
/// it: the destination only knows what is installed.
#[rstest]
fn l2_6_granted_but_not_installed_is_rejected_until_installed(lab: Lab) {
    let c = claim("L2.6");
    c.run(l2::granted_is_not_installed(&c, &lab));
}
