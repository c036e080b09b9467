//! L4: authority does not remove duplicates.

use fencing_lab::{Session, describe};
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// The same intent twice: one effect, and the second answer is the first.
#[rstest]
fn l4_1_same_intent_twice_is_applied_once(lab: Lab) {
    let c = claim("L4.1");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.apply(&mut worker, (A, 1, "r1", 5), replayed(5));
    c.apply(&mut worker, (A, 1, "r1", 5), replayed(5));

    c.state(&lab, A, 1, 5);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
}

/// r1 (+7) returns 7, r2 (+5) takes the value to 12, and replaying r1 still
/// answers 7: the response belongs to the original request.
#[rstest]
fn l4_2_replay_returns_original_7_not_12(lab: Lab) {
    let c = claim("L4.2");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r1", 7), applied(7));
    c.apply(&mut worker, (A, 1, "r2", 5), applied(12));
    c.apply(&mut worker, (A, 1, "r1", 7), replayed(7));

    c.state(&lab, A, 1, 12);
    c.records(&lab, A, &[rec(A, "r1", 7, 7, 1), rec(A, "r2", 5, 12, 1)]);
}

/// The same request id with another delta is not a replay: it is refused,
/// and neither the value nor the record moves.
#[rstest]
#[case::larger(9)]
#[case::smaller(6)]
#[case::zero(0)]
fn l4_3_same_request_id_with_other_delta_is_a_conflict(lab: Lab, #[case] other: i64) {
    let c = claim("L4.3");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r1", 7), applied(7));
    c.apply(&mut worker, (A, 1, "r1", other), conflict("r1", 7, other));

    c.state(&lab, A, 1, 7);
    c.records(&lab, A, &[rec(A, "r1", 7, 7, 1)]);
}

/// r1 on fund-A and r1 on fund-B are two requests.
#[rstest]
fn l4_4_record_is_keyed_by_resource_and_request_id(lab: Lab) {
    let c = claim("L4.4");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r1", 7), applied(7));
    c.apply(&mut worker, (B, 1, "r1", 7), applied(7));
    c.apply(&mut worker, (B, 1, "r1", 7), replayed(7));
    c.apply(&mut worker, (B, 1, "r1", 3), conflict("r1", 7, 3));

    c.state(&lab, A, 1, 7);
    c.state(&lab, B, 1, 7);
    c.records(&lab, B, &[rec(B, "r1", 7, 7, 1)]);
}

/// Two different requests under one generation both apply.
#[rstest]
fn l4_5_generation_is_not_a_deduplication_key(lab: Lab) {
    let c = claim("L4.5");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, "r1", 1), applied(1));
    c.apply(&mut worker, (A, 1, "r2", 2), applied(3));
    c.apply(&mut worker, (A, 1, "r3", 3), applied(6));

    c.state(&lab, A, 1, 6);
}

/// The lost response: r1 was applied, the answer never arrived, and by the
/// time the worker retries it lost its authority. It is told "stale", not
/// the stored result: to learn what happened it must read the state.
#[rstest]
fn l4_6_replay_with_a_stale_generation_is_rejected_as_stale(lab: Lab) {
    let c = claim("L4.6");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 1, "r1", 5), stale(1, 2));
    // A conflicting retry is stale first, too.
    c.apply(&mut worker, (A, 1, "r1", 6), stale(1, 2));

    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
}

/// Presented again under the newer, installed generation, r1 is a replay:
/// the stored result, no second effect.
#[rstest]
fn l4_7_same_request_under_newer_generation_is_a_replay(lab: Lab) {
    let c = claim("L4.7");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 2, "r1", 5), replayed(5));
    c.apply(&mut worker, (A, 2, "r2", 1), applied(6));

    c.state(&lab, A, 2, 6);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1), rec(A, "r2", 1, 6, 2)]);
}

/// A refused or failed apply leaves no record behind.
#[rstest]
#[case::stale(1, "r1", 5, false, stale(1, 2))]
#[case::never_issued(3, "r1", 5, false, never_issued(3, 2))]
#[case::conflict(2, "r0", 6, false, conflict("r0", 5, 6))]
#[case::failed(2, "r1", 5, true, faulted())]
fn l4_8_rejections_store_nothing(
    lab: Lab,
    #[case] generation: i64,
    #[case] request_id: &str,
    #[case] delta: i64,
    #[case] fail: bool,
    #[case] expected: String,
) {
    let c = claim("L4.8");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 2, "r0", 5), applied(5));
    if fail {
        fault_between_writes(&mut worker);
    }
    c.apply(&mut worker, (A, generation, request_id, delta), expected);

    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[rec(A, "r0", 5, 5, 2)]);
}

/// The lost response, end to end: apply commits, the answer never reaches
/// worker A, worker B moves the value on, and A retries. A learns what its
/// own request did, and the value counts it once.
#[rstest]
fn l4_9_lost_response_retry_gets_the_stored_result_and_applies_once(lab: Lab) {
    let c = claim("L4.9");
    let (mut a, mut b) = (lab.connect().unwrap(), lab.connect().unwrap());
    let mut authority = lab.connect().unwrap();

    // A's request commits; its response is lost on the way back (the test
    // still reads it, so that a call that failed says so here).
    let lost = a.apply(A, 1, "a-1", 5);
    c.same(
        "apply(fund-A, generation 1, \"a-1\", +5), whose response is then lost",
        applied(5),
        describe(&lost),
    );
    c.state(&lab, A, 1, 5);
    // Meanwhile B's request lands.
    c.apply(&mut b, (A, 1, "b-1", 3), applied(8));
    // A retries the same intent with the same id.
    c.apply(&mut a, (A, 1, "a-1", 5), replayed(5));
    c.state(&lab, A, 1, 8);
    c.records(&lab, A, &[rec(A, "a-1", 5, 5, 1), rec(A, "b-1", 3, 8, 1)]);

    // Had A waited until the authority moved on, it would learn only that it
    // is stale (L4.6) and must read the state instead.
    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut a, (A, 1, "a-1", 5), stale(1, 2));
    c.state(&lab, A, 2, 8);
}

/// 64 characters in common, then different: an id cut to any shorter
/// length makes these two one.
const LONG_1: &str = "order-2026-12-03-0000000000000000000000000000000000000000000000001";
const LONG_2: &str = "order-2026-12-03-0000000000000000000000000000000000000000000000002";

/// The request id is opaque: two ids that differ in any way, even one a
/// person would call the same, are two requests, each applied once and each
/// replayed with its own result; each record keeps its id byte for byte.
#[rstest]
#[case::case("order-7", "Order-7")]
#[case::surrounding_whitespace("order-7", " order-7 ")]
#[case::trailing_newline("order-7", "order-7\n")]
#[case::unicode_normalization("caf\u{e9}-7", "cafe\u{301}-7")]
#[case::full_width("order-7", "\u{ff4f}\u{ff52}\u{ff44}\u{ff45}\u{ff52}-7")]
#[case::trailing_control_byte("order-7", "order-7\u{1}")]
#[case::prefix("order-7", "order-77")]
#[case::long_common_prefix(LONG_1, LONG_2)]
fn l4_11_ids_that_differ_in_any_way_are_two_requests(
    lab: Lab,
    #[case] first: &str,
    #[case] second: &str,
) {
    let c = claim("L4.11");
    let mut worker = lab.connect().unwrap();

    c.apply(&mut worker, (A, 1, first, 7), applied(7));
    c.apply(&mut worker, (A, 1, second, 7), applied(14));
    c.apply(&mut worker, (A, 1, second, 7), replayed(14));
    c.apply(&mut worker, (A, 1, first, 7), replayed(7));

    c.state(&lab, A, 1, 14);
    // Each id as it was sent, quoted so that a space or a control
    // character shows.
    let mut expected = [
        format!("{first:?} result 7"),
        format!("{second:?} result 14"),
    ];
    expected.sort();
    let mut got: Vec<String> = lab
        .records(A)
        .expect("the observer reads the records")
        .iter()
        .map(|r| format!("{:?} result {}", r.request_id, r.result))
        .collect();
    got.sort();
    c.same(
        format_args!("records of {A}, ids byte for byte"),
        expected.join("; "),
        got.join("; "),
    );
}
