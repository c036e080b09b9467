//! What must hold after every schedule, and the check that holds one
//! schedule against it.

use std::fmt;

use super::requests::{Call, Route, Worker};
use crate::Record;
use crate::{LabError, Outcome, describe_error};

/// What must hold after every schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// No effect commits under a generation other than the one installed at
    /// that moment, and every record carries that generation.
    Fenced,
    /// Each request is applied at most once, and its record says what apply
    /// returned.
    AtMostOnce,
    /// The final value is the sum of the accepted deltas.
    Sum,
    /// A retry of an applied request returns the original result (or is
    /// refused as stale), never a second effect.
    Replay,
    /// Every call is answered: applied, replayed or stale for a worker,
    /// installed for the authority. Contention is tried again, not an
    /// answer; "stale" must be true.
    Answered,
}

impl Invariant {
    /// All of them, in the order they are reported.
    pub const ALL: [Invariant; 5] = [
        Invariant::Fenced,
        Invariant::AtMostOnce,
        Invariant::Sum,
        Invariant::Replay,
        Invariant::Answered,
    ];

    /// The rule in one line.
    pub fn rule(self) -> &'static str {
        match self {
            Invariant::Fenced => {
                "every effect commits under the generation installed at that moment"
            }
            Invariant::AtMostOnce => {
                "each request is applied at most once, and recorded as applied"
            }
            Invariant::Sum => "the final value is the sum of the accepted deltas",
            Invariant::Replay => {
                "a retry of an applied request returns its original result, or is refused as stale"
            }
            Invariant::Answered => {
                "every call is answered: applied, replayed or truly stale; every install lands"
            }
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Invariant::Fenced => "fenced",
            Invariant::AtMostOnce => "at most once",
            Invariant::Sum => "sum",
            Invariant::Replay => "replay",
            Invariant::Answered => "answered",
        })
    }
}

/// One invariant broken by one schedule, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant.
    pub invariant: Invariant,
    /// What happened, with the numbers.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

/// What a check reports a broken invariant with.
type Broke<'a> = dyn FnMut(Invariant, String) + 'a;

/// Holds one schedule's calls, final value and records against the
/// invariants; pushes what broke onto `violations`.
pub(super) fn check(
    route: Route,
    workers: &[Worker],
    calls: &[Call],
    value: i64,
    records: &[Record],
    violations: &mut Vec<Violation>,
) {
    let mut broke = |invariant, detail: String| violations.push(Violation { invariant, detail });
    answered(workers, calls, &mut broke);

    let mut accepted = 0i64;
    for (w, worker) in workers.iter().enumerate() {
        let own = calls.iter().filter(|call| call.worker == w);
        let original = applied(worker, own, &mut accepted, &mut broke);
        if route.keeps_records() {
            recorded(worker, original, records, &mut broke);
        }
    }
    if let Some(stray) = records
        .iter()
        .find(|r| workers.iter().all(|w| w.request_id != r.request_id))
    {
        broke(
            Invariant::AtMostOnce,
            format!("a record of {:?} that no worker sent", stray.request_id),
        );
    }

    if value != accepted {
        broke(
            Invariant::Sum,
            format!("the value is {value}, the accepted deltas add up to {accepted}"),
        );
    }
}

/// Every call got an answer of the contract: applied, replayed, or stale
/// with the numbers it was called with.
fn answered(workers: &[Worker], calls: &[Call], broke: &mut Broke) {
    for call in calls {
        let worker = &workers[call.worker];
        let what = if call.retry { "retry" } else { "request" };
        match &call.result {
            Ok(_) => {}
            Err(LabError::Stale {
                presented,
                installed,
            }) if *presented == call.generation
                && *installed == call.installed
                && call.generation < call.installed => {}
            Err(error) => broke(
                Invariant::Answered,
                format!("{}'s {what} -> {}", worker.name, describe_error(error)),
            ),
        }
    }
}

/// One worker's calls: each applied write was fenced, the request applied
/// at most once, a replay answered with the original result. Adds its
/// applied deltas to `accepted`; returns the call that applied it.
fn applied<'c>(
    worker: &Worker,
    calls: impl Iterator<Item = &'c Call>,
    accepted: &mut i64,
    broke: &mut Broke,
) -> Option<&'c Call> {
    let mut original: Option<&Call> = None;
    for call in calls {
        match call.result {
            Ok(Outcome::Applied { result }) => {
                *accepted = accepted.saturating_add(worker.delta);
                let installed = call.installed_at_commit();
                if call.generation != installed {
                    broke(
                        Invariant::Fenced,
                        format!(
                            "{}'s write of {:+} committed while generation {installed} was installed (it held {})",
                            worker.name, worker.delta, call.generation
                        ),
                    );
                }
                if original.is_some() {
                    broke(
                        Invariant::AtMostOnce,
                        format!("{}'s {:+} was applied twice", worker.name, worker.delta),
                    );
                    broke(
                        Invariant::Replay,
                        format!(
                            "{}'s retry applied {:+} again (result {result})",
                            worker.name, worker.delta
                        ),
                    );
                } else {
                    original = Some(call);
                }
            }
            Ok(Outcome::Replayed { result }) => match original.map(|o| o.result.as_ref()) {
                Some(Ok(first)) if first.result() == result => {}
                Some(Ok(first)) => broke(
                    Invariant::Replay,
                    format!(
                        "{}'s retry returned {result}, the original result was {}",
                        worker.name,
                        first.result()
                    ),
                ),
                _ => broke(
                    Invariant::Replay,
                    format!(
                        "{}'s {:?} was answered as a replay ({result}) but never applied",
                        worker.name, worker.request_id
                    ),
                ),
            },
            Err(_) => {}
        }
    }
    original
}

/// The record of one worker's request: there exactly when it was applied,
/// with what apply returned and the generation installed when it committed.
fn recorded(worker: &Worker, original: Option<&Call>, records: &[Record], broke: &mut Broke) {
    let record = records.iter().find(|r| r.request_id == worker.request_id);
    match (original, record) {
        (Some(call), Some(record)) => {
            let result = call.result.as_ref().map_or(0, |o| o.result());
            if record.delta != worker.delta || record.result != result {
                broke(
                    Invariant::AtMostOnce,
                    format!(
                        "the record of {:?} says delta {:+}, result {}; apply returned {result} for {:+}",
                        worker.request_id, record.delta, record.result, worker.delta
                    ),
                );
            }
            let installed = call.installed_at_commit();
            if record.generation != installed {
                broke(
                    Invariant::Fenced,
                    format!(
                        "the record of {:?} says generation {}, but {installed} was installed when it committed",
                        worker.request_id, record.generation
                    ),
                );
            }
        }
        (Some(_), None) => broke(
            Invariant::AtMostOnce,
            format!(
                "{:?} was applied, but no record remembers it",
                worker.request_id
            ),
        ),
        (None, Some(record)) => broke(
            Invariant::AtMostOnce,
            format!(
                "a record of {:?} ({:+}) exists, but no apply of it returned applied",
                record.request_id, record.delta
            ),
        ),
        (None, None) => {}
    }
}
