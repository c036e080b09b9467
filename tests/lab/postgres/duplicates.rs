//! L4.10 on PostgreSQL: the same request delivered on two sessions at once.
//! The first delivery is paused at each checkpoint its apply reaches, one
//! run per checkpoint, and while it waits there the second delivery runs to
//! its end on another session. A delivery refused by contention tries
//! again once the other is done.

use std::cell::RefCell;
use std::rc::Rc;

use fencing_lab::{Checkpoint, Session, describe};
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// What one run of the exploration saw.
struct Run {
    /// Where the first delivery was paused, if it got that far.
    paused_at: Option<Checkpoint>,
    /// Each delivery's results, contention retried: first, then second.
    first: Vec<String>,
    second: Vec<String>,
}

/// Worker 1 sends a request (+1) and, its answer slow, sends it again on a
/// second session. In every run each delivery gets the original result,
/// applied or replayed, never another error (a primary-key violation from
/// a lookup made before the lock, say); the value moves once and one record
/// says so.
#[rstest]
fn l4_10_the_same_request_on_two_sessions_at_once_applies_once(lab: Lab) {
    let c = claim("L4.10");
    let mut value = 0;
    let mut paused_runs = 0;
    for k in 1_usize.. {
        let request_id = format!("r{k}");
        let run = deliver_twice(&lab, &request_id, k);
        let Some(paused_at) = run.paused_at else {
            break;
        };
        paused_runs += 1;
        let expected = value + 1;
        let finals = [run.first.last(), run.second.last()];
        let results_ok = finals.iter().all(|result| {
            result
                .is_some_and(|result| *result == applied(expected) || *result == replayed(expected))
        }) && finals
            .iter()
            .filter(|result| result.is_some_and(|result| *result == applied(expected)))
            .count()
            == 1;
        let state = lab.state(A).expect("the observer reads the lab");
        let records: Vec<String> = lab
            .records(A)
            .expect("the observer reads the records")
            .iter()
            .filter(|record| record.request_id == request_id)
            .map(ToString::to_string)
            .collect();
        let want_records = [rec(A, &request_id, 1, expected, 1)];
        if !results_ok || state.value != expected || records != want_records {
            c.fail(
                format_args!(
                    "apply(fund-A, generation 1, {request_id:?}, +1) delivered twice: the first paused at its checkpoint {k} ({paused_at}), the second run to its end meanwhile"
                ),
                format!(
                    "one delivery {}, the other {} (contention tried again); value {expected}; one record: {}",
                    applied(expected),
                    replayed(expected),
                    want_records[0]
                ),
                format!(
                    "first delivery: {}; second: {}; value {}; records: {}",
                    run.first.join(", then "),
                    run.second.join(", then "),
                    state.value,
                    if records.is_empty() { "none".to_owned() } else { records.join("; ") }
                ),
            );
        }
        value = expected;
    }
    c.same(
        "runs with the second delivery made while the first was paused",
        "at least one (apply reaches a checkpoint)",
        if paused_runs > 0 {
            "at least one (apply reaches a checkpoint)"
        } else {
            "none: apply returned before any checkpoint"
        },
    );
}

/// Delivers `request_id` twice: the first delivery paused at its `k`-th
/// checkpoint (counting the call's start), the second run meanwhile.
fn deliver_twice(lab: &Lab, request_id: &str, k: usize) -> Run {
    let mut first = lab.connect().unwrap();
    let second_results: Rc<RefCell<Vec<String>>> = Rc::default();
    let paused_at: Rc<RefCell<Option<Checkpoint>>> = Rc::default();
    let (hook_lab, hook_results, hook_paused) = (
        lab.clone(),
        Rc::clone(&second_results),
        Rc::clone(&paused_at),
    );
    let id = request_id.to_owned();
    let mut reached = 0;
    first.on_checkpoint(move |checkpoint| {
        reached += 1;
        if reached == k {
            *hook_paused.borrow_mut() = Some(checkpoint);
            let result = hook_lab
                .connect()
                .and_then(|mut second| second.apply(A, 1, &id, 1));
            hook_results.borrow_mut().push(describe(&result));
        }
        Ok(())
    });
    let mut first_results = vec![describe(&first.apply(A, 1, request_id, 1))];
    first.clear_checkpoint();
    let paused_at = *paused_at.borrow();
    let mut second_results = second_results.take();
    if paused_at.is_none() {
        return Run {
            paused_at,
            first: first_results,
            second: second_results,
        };
    }
    // Contention is not an answer: each delivery refused by it tries again
    // (a few times at most), now that the other is done.
    let retry = |results: &mut Vec<String>| {
        while results.len() < 4 && results.last().is_some_and(|last| *last == contention()) {
            let again = lab
                .connect()
                .and_then(|mut db| db.apply(A, 1, request_id, 1));
            results.push(describe(&again));
        }
    };
    retry(&mut first_results);
    retry(&mut second_results);
    Run {
        paused_at,
        first: first_results,
        second: second_results,
    }
}
