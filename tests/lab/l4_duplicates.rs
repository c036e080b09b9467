//! L4: authority does not remove duplicates. Each test runs its scene
//! (`src/scenes/l4.rs`); the story tells one case of each.

use std::sync::LazyLock;

use fencing_lab::MAX_REQUEST_ID_BYTES;
use fencing_lab::scenes::l4::{self, Refusal};
use rstest::rstest;

// One file, a module per destination: compiled by `main.rs` for SQLite, and
// through `#[path]` by `postgres.rs` for PostgreSQL and `postgres_sql.rs`
// for lesson 8's SQL functions. `super` is that destination's module, so
// `Lab`, `claim` and `lab` are its own.
use super::{Lab, claim, lab};

/// The same intent twice: one effect, and the second answer is the first.
#[rstest]
fn l4_1_same_intent_twice_is_applied_once(lab: Lab) {
    let c = claim("L4.1");
    c.run(l4::same_intent_twice(&c, &lab));
}

/// r1 (+7) returns 7, r2 (+5) takes the value to 12, and replaying r1 still
/// answers 7: the response belongs to the original request.
#[rstest]
fn l4_2_replay_returns_original_7_not_12(lab: Lab) {
    let c = claim("L4.2");
    c.run(l4::replay_returns_the_original(&c, &lab));
}

/// The same request id with another delta is not a replay: it is refused,
/// and neither the value nor the record moves.
#[rstest]
#[case::larger(9)]
#[case::smaller(6)]
#[case::zero(0)]
fn l4_3_same_request_id_with_other_delta_is_a_conflict(lab: Lab, #[case] other: i64) {
    let c = claim("L4.3");
    c.run(l4::other_delta_is_a_conflict(&c, &lab, other));
}

/// r1 on fund-A (+7) and r1 on fund-B (+4) are two requests.
#[rstest]
fn l4_4_record_is_keyed_by_resource_and_request_id(lab: Lab) {
    let c = claim("L4.4");
    c.run(l4::keyed_by_resource_and_id(&c, &lab));
}

/// Two different requests under one generation both apply.
#[rstest]
fn l4_5_generation_is_not_a_deduplication_key(lab: Lab) {
    let c = claim("L4.5");
    c.run(l4::generation_is_not_a_key(&c, &lab));
}

/// The lost response: r1 was applied, the answer never arrived, and by the
/// time the worker retries it lost its authority. It is told "stale", not
/// the stored result: to learn what happened it must read the state.
#[rstest]
fn l4_6_replay_with_a_stale_generation_is_rejected_as_stale(lab: Lab) {
    let c = claim("L4.6");
    c.run(l4::late_retry_is_stale(&c, &lab));
}

/// Presented again under the newer, installed generation, r1 is a replay:
/// the stored result, no second effect.
#[rstest]
fn l4_7_same_request_under_newer_generation_is_a_replay(lab: Lab) {
    let c = claim("L4.7");
    c.run(l4::replay_under_a_newer_generation(&c, &lab));
}

/// A refused or failed apply leaves no record behind.
#[rstest]
#[case::stale(Refusal::Stale)]
#[case::never_issued(Refusal::NeverIssued)]
#[case::conflict(Refusal::Conflict)]
#[case::failed(Refusal::Failed)]
fn l4_8_rejections_store_nothing(lab: Lab, #[case] refusal: Refusal) {
    let c = claim("L4.8");
    c.run(l4::refusals_store_nothing(&c, &lab, refusal));
}

/// The lost response, end to end: apply commits, the answer never reaches
/// worker A, worker B moves the value on, and A retries. A learns what its
/// own request did, and the value counts it once.
#[rstest]
fn l4_9_lost_response_retry_gets_the_stored_result_and_applies_once(lab: Lab) {
    let c = claim("L4.9");
    c.run(l4::lost_response_retry_is_a_replay(&c, &lab));
}

/// The longest request ids the contract allows, in bytes: two-byte
/// characters, then one byte that differs. An id cut to any shorter length,
/// or a limit counted in characters, makes these two one.
const _: () = assert!(MAX_REQUEST_ID_BYTES % 2 == 1);
static LONGEST: LazyLock<[String; 2]> = LazyLock::new(|| {
    let start = "\u{e9}".repeat(MAX_REQUEST_ID_BYTES / 2);
    [format!("{start}1"), format!("{start}2")]
});

/// The request id is opaque: two ids that differ in any way, even one a
/// person would call the same, are two requests, each applied once and each
/// replayed with its own result; each record keeps its id byte for byte.
/// An id is data, never SQL: one that a destination pasted into its
/// statements would find another's record, fail, or run.
#[rstest]
#[case::case("order-7", "Order-7")]
#[case::surrounding_whitespace("order-7", " order-7 ")]
#[case::trailing_newline("order-7", "order-7\n")]
#[case::unicode_normalization("caf\u{e9}-7", "cafe\u{301}-7")]
#[case::full_width("order-7", "\u{ff4f}\u{ff52}\u{ff44}\u{ff45}\u{ff52}-7")]
#[case::trailing_control_byte("order-7", "order-7\u{1}")]
#[case::trailing_space("order-7", "order-7 ")]
#[case::leading_space("order-7", " order-7")]
#[case::quote("order-7", "order-7'")]
#[case::always_true_sql("order-7", "x' OR '1'='1")]
#[case::sql_statements("order-7", "order-7'); DELETE FROM requests; --")]
#[case::prefix("order-7", "order-77")]
#[case::longest_ids_with_a_common_start(&LONGEST[0], &LONGEST[1])]
fn l4_11_ids_that_differ_in_any_way_are_two_requests(
    lab: Lab,
    #[case] first: &str,
    #[case] second: &str,
) {
    let c = claim("L4.11");
    c.run(l4::ids_are_opaque(&c, &lab, first, second));
}
