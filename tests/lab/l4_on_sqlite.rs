//! The part of L4 only the SQLite lab checks. L4.10: the same request
//! delivered on two connections at once, at every point the checkpoints
//! allow, run on a real SQLite file in both journal modes (the explorer
//! drives SQLite connections; it has no PostgreSQL twin). And one case of
//! L4.11 that PostgreSQL cannot hold: a request id with a NUL byte in it (a
//! PostgreSQL text value never contains one; SQLite's keeps it).

use fencing_lab::scenes::l4;
use fencing_lab::{Journal, Lab};

use crate::support::*;

/// Worker 1 sends r1 (+1) and, its answer slow, sends it again on a second
/// connection. Whichever delivery comes first is paused at each checkpoint
/// its apply reaches while the other runs to its end; a delivery refused by
/// contention tries again. In every schedule each delivery gets the
/// original result, applied or replayed, never another error; the value
/// moves once and one record says so. Then one such schedule told step by
/// step (`src/scenes/l4.rs`): the resend meets the first delivery's lock
/// and, once the first commits, is a replay.
#[test]
fn l4_10_the_same_request_on_two_connections_at_once_applies_once() {
    let c = claim("L4.10");
    crate::enumerator::check_the_enumerator();
    for journal in [Journal::Wal, Journal::Rollback] {
        let found = c.run(l4::the_same_request_at_once(&c, journal));
        println!(
            "L4.10 ({journal}): {} schedules, {} held, {} with the duplicate run while the first was paused",
            found.schedules, found.held, found.paused
        );
    }
    // One of those schedules told step by step, as the story tells it.
    let lab = Lab::new(Journal::Wal).expect("the harness creates a lab");
    c.run(l4::a_resend_while_the_first_is_paused(&c, &lab));
}

/// One more byte, and that byte a NUL, still makes another request: an id
/// cut at its first NUL, as C strings are, would make these two one.
#[test]
fn l4_11_an_id_with_a_trailing_nul_is_another_request() {
    let c = claim("L4.11");
    let lab = Lab::new(Journal::Rollback).expect("the harness creates a lab");
    let mut worker = lab.connect().unwrap();
    let (first, second) = ("order-7", "order-7\0");

    c.apply(&mut worker, (A, 1, first, 7), applied(7));
    c.apply(&mut worker, (A, 1, second, 7), applied(14));
    c.apply(&mut worker, (A, 1, second, 7), replayed(14));
    c.apply(&mut worker, (A, 1, first, 7), replayed(7));

    c.state(&lab, A, 1, 14);
    let got: Vec<String> = lab
        .records(A)
        .expect("the observer reads the records")
        .iter()
        .map(|r| format!("{:?} result {}", r.request_id, r.result))
        .collect();
    c.same(
        format_args!("records of {A}, ids byte for byte"),
        format!("{first:?} result 7; {second:?} result 14"),
        got.join("; "),
    );
}
