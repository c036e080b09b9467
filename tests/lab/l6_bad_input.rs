//! L6: bad input gets a clear error and changes nothing. Each test runs its
//! scene (`src/scenes/l6.rs`); the story tells one case of each.

use fencing_lab::scenes::l6;
use std::sync::LazyLock;

use fencing_lab::{LabError, MAX_REQUEST_ID_BYTES};
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};
use crate::support::*;

/// One byte past the longest request id the contract allows, in two-byte
/// characters: 256 bytes, 128 characters. A limit counted in characters
/// takes it for a short one.
static TOO_LONG: LazyLock<String> =
    LazyLock::new(|| "\u{e9}".repeat(MAX_REQUEST_ID_BYTES.div_ceil(2)));

/// Each bad apply is refused with an error that names the problem, after a
/// good request made the state worth protecting; nothing moves.
#[rstest]
#[case::unknown_resource("fund-Z", 1, "r2", 1, LabError::UnknownResource("fund-Z".into()))]
#[case::resource_name_with_sql("fund-A' OR '1'='1", 1, "r2", 1, LabError::UnknownResource("fund-A' OR '1'='1".into()))]
#[case::empty_resource_name("", 1, "r2", 1, LabError::UnknownResource("".into()))]
#[case::empty_request_id(A, 1, "", 1, LabError::EmptyRequestId)]
#[case::request_id_one_byte_too_long(A, 1, &TOO_LONG, 1, LabError::RequestIdTooLong)]
#[case::generation_zero(A, 0, "r2", 1, LabError::GenerationBelowOne(0))]
#[case::generation_negative(A, -1, "r2", 1, LabError::GenerationBelowOne(-1))]
#[case::generation_minimum(A, i64::MIN, "r2", 1, LabError::GenerationBelowOne(i64::MIN))]
#[case::overflow_up(A, 1, "r2", i64::MAX, LabError::Overflow { value: 5, delta: i64::MAX })]
fn l6_1_bad_apply_gets_a_typed_error_and_changes_nothing(
    lab: Lab,
    #[case] resource: &str,
    #[case] generation: i64,
    #[case] request_id: &str,
    #[case] delta: i64,
    #[case] error: LabError,
) {
    let c = claim("L6.1");
    c.run(l6::bad_apply_changes_nothing(
        &c,
        &lab,
        (resource, generation, request_id, delta),
        error,
    ));
}

/// Overflow in both directions is a typed error, never a wrapped number or
/// a silent REAL.
#[rstest]
#[case::up(i64::MAX - 1, 2)]
#[case::down(i64::MIN + 1, -2)]
fn l6_1_value_overflow_is_a_typed_error(lab: Lab, #[case] start: i64, #[case] delta: i64) {
    let c = claim("L6.1");
    c.run(l6::overflow_is_a_typed_error(&c, &lab, start, delta));
}

/// install_generation refuses what no authority could mean, and changes
/// nothing.
#[rstest]
#[case::zero(A, 0, LabError::GenerationBelowOne(0))]
#[case::negative(A, -7, LabError::GenerationBelowOne(-7))]
#[case::unknown_resource("fund-Z", 2, LabError::UnknownResource("fund-Z".into()))]
fn l6_1_bad_install_gets_a_typed_error_and_changes_nothing(
    lab: Lab,
    #[case] resource: &str,
    #[case] generation: i64,
    #[case] error: LabError,
) {
    let c = claim("L6.1");
    c.run(l6::bad_install_changes_nothing(
        &c, &lab, resource, generation, error,
    ));
}
