//! What each hint takes for granted, checked against the step it is shown
//! on.
//!
//! A hint's first sentence states a fact about the learner's code ("your
//! apply accepted a generation that is not the installed one"). That fact
//! must follow from what the failing step printed, its `step`, `expected`
//! and `got`, and from nothing else: not from the mistake the hint was
//! written for. [`holds`] is that check, one predicate per hint, written
//! from the hint's words rather than from the selection that picks it, so
//! the two can disagree and the disagreement is caught. [`for_step`](super::for_step)
//! shows a hint only when its premise holds, and a neutral one otherwise;
//! `.ci/hint-premises` runs the same check over every failure the graded
//! classes and the machine-made mutants print.

use super::{INSTALL_GOT_IN, Seen, TRANSACTION_ENDED, first_difference, paused_parts, value_after};

/// What a failing step printed, as a premise reads it.
pub(super) struct Step<'a> {
    /// What the test did.
    pub step: &'a str,
    /// The first part of `expected` that differs from `got`.
    pub expected: &'a str,
    /// The first part of `got` that differs from `expected`.
    pub got: &'a str,
    /// The whole `got`, as printed.
    pub got_whole: &'a str,
    /// The whole `expected`, as printed.
    pub expected_whole: &'a str,
}

impl<'a> Step<'a> {
    /// A step as its failure prints it.
    pub(super) fn new(step: &'a str, expected: &'a str, got: &'a str) -> Step<'a> {
        let (first_expected, first_got) = first_difference(expected, got);
        Step {
            step,
            expected: first_expected,
            got: first_got,
            got_whole: got,
            expected_whole: expected,
        }
    }

    fn seen(&self) -> (Seen, Seen) {
        (Seen::of(self.expected), Seen::of(self.got))
    }
}

/// Whether hint `id`'s premise holds for `step`. A claim's own hint takes
/// nothing for granted beyond the claim's statement.
pub(super) fn holds(id: &str, step: &Step<'_>) -> bool {
    premise(id, step).unwrap_or(true)
}

/// Whether hint `id` has a premise here (every observation's must).
#[cfg(test)]
pub(super) fn written_for(id: &str) -> bool {
    premise(id, &Step::new("", "", "")).is_some()
}

/// Hint `id`'s premise on `step`, or `None` for an id that is not an
/// observation's (a claim's own hint).
// Whole: a table, one arm per observation's hint, read top to bottom beside
// the hints' words; cut into pieces, a hint's premise would be looked for in
// two places.
#[allow(clippy::too_many_lines)]
fn premise(id: &str, step: &Step<'_>) -> Option<bool> {
    use Seen::*;
    let (expected, got) = step.seen();
    let verdict = |seen: Seen| {
        matches!(
            seen,
            Applied(_)
                | Replayed(_)
                | Installed
                | Stale
                | NeverIssued
                | NotHigher
                | Conflict
                | Unknown
                | Overflow
                | BadInput
                | IdTooLong
        )
    };
    let accepted = |seen: Seen| matches!(seen, Applied(_) | Replayed(_) | Installed);
    Some(match id {
        // The step's `got` says so itself.
        "not-implemented" => got == NotImplemented,
        "panicked" => got == Panicked,
        "duplicate-insert" => Seen::of(step.got_whole) == DuplicateKey || got == DuplicateKey,
        "database-error" => got == DatabaseError,
        "not-allowed" => got == NotAllowed,
        // Where the step says the call was paused, and what met it there.
        "decided-in-another-transaction" => step.step.contains(TRANSACTION_ENDED),
        "lock-taken-after-the-read" => step.step.contains(INSTALL_GOT_IN) && got == Contention,
        "read-without-lock" => step.got.contains("generation was read while"),
        "lost-update" => {
            step.step.contains("ran to its end")
                && step.got_whole.matches("-> applied").count() == 2
                && value_after(step.got_whole) != value_after(step.expected_whole)
        }
        "lock-not-held" => {
            paused_met(step, |due, met| {
                due.starts_with("contention") && through(met)
            }) || (step.step.contains("paused")
                && expected == Contention
                && (accepted(got) || step.got.starts_with("acquired")))
        }
        "lock-too-wide" => paused_met(step, |due, met| {
            through(due) && met.starts_with("contention")
        }),
        "contention-answered" => {
            (expected == Contention && verdict(got))
                || paused_met(step, |due, met| {
                    due.starts_with("contention") && !met.starts_with("contention") && !through(met)
                })
        }
        "checkpoint-not-reached" => got == NeverReached,
        // Contention that no lock of the test's explains: not a fault the
        // test injected, not a step that paused the call while another
        // install got in, not a step that expected contention.
        "unexpected-contention" => {
            got == Contention
                && !matches!(expected, Contention | Fault)
                && !step.step.contains(INSTALL_GOT_IN)
        }
        // The input, by what the step expected.
        "overflow" => expected == Overflow,
        "bad-input" => expected == BadInput,
        "id-too-long-not-refused" => expected == IdTooLong && got != IdTooLong,
        "overflow-before-record" => matches!(expected, Conflict | Replayed(_)) && got == Overflow,
        "valid-input-refused" => matches!(got, BadInput | IdTooLong | Overflow) && expected != got,
        "unknown-resource" => expected == Unknown,
        "known-resource-refused" => got == Unknown && expected != Unknown,
        // Generations: the hint says what was due and what was answered.
        "stale-replayed" => matches!(expected, Stale | NeverIssued) && matches!(got, Replayed(_)),
        "stale-compared-with-record" => matches!(expected, Stale | NeverIssued) && got == Conflict,
        "stale-or-never-issued" => {
            matches!((expected, got), (Stale, NeverIssued) | (NeverIssued, Stale))
        }
        "generation-accepted" => matches!(expected, Stale | NeverIssued) && accepted(got),
        "current-refused" => {
            matches!(expected, Applied(_) | Replayed(_))
                && got.refusal_by_generation()
                && !refusal_numbers_agree(step.got)
        }
        "refusal-numbers-agree" => {
            matches!(expected, Applied(_) | Replayed(_))
                && got.refusal_by_generation()
                && refusal_numbers_agree(step.got)
        }
        // Requests and their records.
        "new-request-replayed" => {
            matches!(expected, Applied(_) | Overflow | Fault) && matches!(got, Replayed(_))
        }
        "new-request-conflict" => {
            matches!(expected, Applied(_) | Overflow | Fault) && got == Conflict
        }
        "wrong-result" => {
            matches!((expected, got), (Applied(a), Applied(b)) if a != b)
        }
        "replay-applied-again" => matches!((expected, got), (Replayed(_), Applied(_))),
        "replay-wrong-result" => {
            matches!((expected, got), (Replayed(a), Replayed(b)) if a != b)
                || super::explorer_replay_differs(step.got)
        }
        "replay-conflict" => matches!(expected, Replayed(_)) && got == Conflict,
        "conflict-replayed" => expected == Conflict && matches!(got, Replayed(_)),
        "conflict-applied" => expected == Conflict && matches!(got, Applied(_)),
        "install-not-higher" => expected == NotHigher && got == Installed,
        "install-refused" => expected == Installed && got == NotHigher,
        // What the observer read.
        "generation-differs" => matches!(
            (expected, got),
            (State { generation: a, .. }, State { generation: b, .. }) if a != b
        ),
        "value-differs" => matches!(
            (expected, got),
            (State { generation: a, value: x }, State { generation: b, value: y }) if a == b && x != y
        ),
        "record-missing" => {
            let (due, found) = (record_ids(step.expected), record_ids(step.got));
            found.len() < due.len() && found.iter().all(|id| due.contains(id))
        }
        "record-on-refusal" => {
            let (due, found) = (record_ids(step.expected), record_ids(step.got));
            found.len() > due.len() && due.iter().all(|id| found.contains(id))
        }
        "record-differs" => {
            let (due, found) = (record_ids(step.expected), record_ids(step.got));
            expected == Records
                && got == Records
                && due == found
                && recorded(step.expected) != recorded(step.got)
        }
        "records-differ" => {
            let (due, found) = (record_ids(step.expected), record_ids(step.got));
            expected == Records
                && got == Records
                && due.iter().any(|id| !found.contains(id))
                && found.iter().any(|id| !due.contains(id))
        }
        // The neutral hints name the printed difference and nothing more.
        "fault-relabelled" => expected == Fault && got != Fault,
        "other-numbers" => expected == got && step.expected != step.got,
        "answer-differs" => step.expected != step.got,
        // etcd: what the worker's step shows about its token and request.
        "etcd-token-not-installed" => step.got.contains("generation never issued"),
        "etcd-done-without-applying" => {
            matches!(got, Applied(_) | Replayed(_))
                && step.got_whole.contains("apply called 0 time(s)")
        }
        "etcd-acted-without-authority" => {
            matches!(got, Applied(_))
                && !step.got_whole.contains("apply called 0 time(s)")
                && (step.expected.contains("stop")
                    || step.expected.contains("refused")
                    || step.expected.starts_with("rejected: stale"))
        }
        "etcd-token-not-rising" => {
            step.got.starts_with("generation 1") && step.expected.contains("above")
        }
        "etcd-request-id" => {
            (matches!(expected, Replayed(_)) && matches!(got, Applied(_)))
                || (expected == Records && got == Records)
        }
        // The claims' own hints that say what the learner's code let
        // through (lesson 8's roles and rule): only where the step shows it.
        "L8.1" => step.expected == "refused: permission denied" && step.got == "written",
        "L8.2" => step.expected == "refused: permission denied" && step.got == "installed",
        "L8.3" => step.expected == "refused" && step.got == "written",
        // Any other claim's own hint (`L4.9`) describes what the test did
        // and asks about the claim's statement.
        _ => return None,
    })
}

/// Whether an actor the test ran while the call was paused was due
/// something and met something for which `test` holds.
fn paused_met(step: &Step<'_>, test: impl Fn(&str, &str) -> bool) -> bool {
    let (due, met) = (paused_parts(step.expected), paused_parts(step.got));
    due.iter().any(|(what, due)| {
        met.iter()
            .find(|(other, _)| other == what)
            .is_some_and(|(_, met)| test(due, met))
    })
}

/// Whether an actor got through: a lock acquired, an install or an apply
/// that went in.
pub(super) fn through(met: &str) -> bool {
    ["acquired", "installed", "applied"]
        .iter()
        .any(|ok| met.starts_with(ok))
}

/// Whether a refusal by generation (`rejected: stale generation: presented
/// 1, installed 1`) names the same number as presented and as installed:
/// the one case a check of the generation lets through.
pub(super) fn refusal_numbers_agree(line: &str) -> bool {
    let number = |after: &str| {
        let (_, rest) = line.split_once(after)?;
        rest.split(|c: char| !c.is_ascii_digit() && c != '-')
            .next()?
            .parse::<i64>()
            .ok()
    };
    matches!(
        (number("presented "), number("installed ")),
        (Some(presented), Some(installed)) if presented == installed
    )
}

/// The records a line names, each as printed (`fund-A r1 delta +5 result 5
/// generation 1`), sorted: the part after `records: ` (or `one record: `)
/// where a line tells more than records, each record less a note in
/// brackets that follows it (`(or r2-1 first)`).
fn recorded(line: &str) -> Vec<&str> {
    let after = |marker: &str| line.split_once(marker).map(|(_, after)| after);
    let records = after("records: ")
        .or_else(|| after("record: "))
        .unwrap_or(line);
    if records.starts_with("no records") {
        return Vec::new();
    }
    let mut found: Vec<&str> = records
        .split("; ")
        .filter(|record| record.contains(" delta "))
        .map(|record| record.split(" (").next().unwrap_or(record).trim())
        .collect();
    found.sort_unstable();
    found
}

/// The requests a records line names (`fund-A r1`), sorted: of each record
/// [`recorded`] reads, the part before its ` delta `.
pub(super) fn record_ids(line: &str) -> Vec<String> {
    let mut ids: Vec<String> = recorded(line)
        .into_iter()
        .filter_map(|record| record.split_once(" delta ").map(|(id, _)| id.to_owned()))
        .collect();
    ids.sort();
    ids
}
