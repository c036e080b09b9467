//! What each hint takes for granted, checked against the facts of the step
//! it is shown on.
//!
//! A hint's first sentence states a fact about the learner's code ("your
//! apply accepted a generation that is not the installed one"). That fact
//! must follow from what happened in the failing step ([`Facts`]: the
//! answers, the state and records read, what other actors met while the
//! call was paused, where it was paused) and from nothing else: not from
//! the mistake the hint was written for. [`holds`] is that check, one
//! predicate per hint, written from the hint's words rather than from the
//! selection that picks it, so the two can disagree and the disagreement
//! is caught. A premise covers all three levels of its hint: a level that
//! names a cause or a fix takes it for granted too.
//! [`for_step`](super::for_step) shows a hint only when its premise holds,
//! and a neutral one otherwise; `cargo xtask premises` runs the same check
//! over every failure the graded classes and the machine-made mutants
//! print.

use crate::facts::{Answer, Facts, Met, Observed, Pause, Recorded};

/// Whether hint `id`'s premise holds for `facts`. A claim's own hint takes
/// nothing for granted beyond the claim's statement.
pub(super) fn holds(id: &str, facts: &Facts) -> bool {
    premise(id, facts).unwrap_or(true)
}

/// Whether hint `id` has a premise here (every observation's must).
#[cfg(test)]
pub(super) fn written_for(id: &str) -> bool {
    premise(id, &Facts::read("", "", "")).is_some()
}

/// Hint `id`'s premise on `step`, or `None` for an id that is not an
/// observation's (a claim's own hint).
// Whole: a table, one arm per observation's hint, read top to bottom beside
// the hints' words; cut into pieces, a hint's premise would be looked for in
// two places.
#[allow(clippy::too_many_lines)]
fn premise(id: &str, facts: &Facts) -> Option<bool> {
    use Answer::*;
    let other = Other;
    let expected = facts.expected.answer().unwrap_or(&other);
    let got = facts.got.answer().unwrap_or(&other);
    let (expected_words, got_words) = (facts.words.0.as_str(), facts.words.1.as_str());
    let paused = |pause: Pause| facts.held_at(pause);
    Some(match id {
        // What the call answered says so itself.
        "not-implemented" => *got == NotImplemented,
        "panicked" => *got == Panicked,
        "duplicate-insert" => {
            // Anywhere in the line: the reader finds a duplicate key in a
            // list of several callers' answers too.
            *got == DuplicateKey || facts.got_whole.is(|a| *a == DuplicateKey)
        }
        "database-error" => *got == DatabaseError,
        "not-allowed" => *got == NotAllowed,
        // Where the call was paused, and what met it there.
        "decided-in-another-transaction" => paused(Pause::BetweenTransactions),
        // "…though that install had committed by then": where the lab saw
        // commits, one of another connection's fell inside the call.
        "lock-taken-after-the-read" => {
            paused(Pause::InstallGotIn)
                && *got == Contention
                && facts.others_committed_during_the_call().unwrap_or(true)
        }
        "read-without-lock" => got_words.contains("generation was read while"),
        "lost-update" => {
            let applied_both = |o: &Observed| match o {
                Observed::Answers { answers, .. } => {
                    answers
                        .iter()
                        .filter(|(_, a)| matches!(a, Applied(_)))
                        .count()
                        == 2
                }
                _ => false,
            };
            let value = |o: &Observed| match o {
                Observed::Answers { value, .. } => *value,
                _ => None,
            };
            paused(Pause::OtherRanToEnd)
                && applied_both(&facts.got_whole)
                && value(&facts.got_whole) != value(&facts.expected_whole)
        }
        "lock-not-held" => {
            paused_met(facts, |due, met| *due == Contention && met.through())
                || (facts.held() && *expected == Contention && (got.accepted() || *got == Acquired))
        }
        "lock-too-wide" => paused_met(facts, |due, met| due.through() && *met == Contention),
        "contention-answered" => {
            (*expected == Contention && got.verdict())
                || paused_met(facts, |due, met| {
                    *due == Contention && *met != Contention && !met.through()
                })
        }
        "checkpoint-not-reached" => facts.got == Observed::NeverReached,
        // Contention that no lock of the test's explains: not a fault the
        // test injected, not a step that paused the call while another
        // install got in, not a step that expected contention.
        "unexpected-contention" => {
            *got == Contention
                && !matches!(expected, Contention | Fault)
                && !paused(Pause::InstallGotIn)
        }
        // The input, by what the step expected.
        "overflow" => *expected == Overflow,
        "bad-input" => *expected == BadInput,
        "id-too-long-not-refused" => *expected == IdTooLong && *got != IdTooLong,
        "overflow-before-record" => matches!(expected, Conflict | Replayed(_)) && *got == Overflow,
        "valid-input-refused" => matches!(got, BadInput | IdTooLong | Overflow) && expected != got,
        "unknown-resource" => *expected == Unknown,
        "known-resource-refused" => *got == Unknown && *expected != Unknown,
        // Generations: the hint says what was due and what was answered.
        "stale-replayed" => expected.refused_by_generation() && matches!(got, Replayed(_)),
        "stale-compared-with-record" => expected.refused_by_generation() && *got == Conflict,
        "stale-or-never-issued" => matches!(
            (expected, got),
            (Stale(_), NeverIssued(_)) | (NeverIssued(_), Stale(_))
        ),
        "generation-accepted" => expected.refused_by_generation() && got.accepted(),
        "current-refused" => {
            matches!(expected, Applied(_) | Replayed(_))
                && got.refused_by_generation()
                && !got.numbers_agree()
        }
        "refusal-numbers-agree" => {
            matches!(expected, Applied(_) | Replayed(_))
                && got.refused_by_generation()
                && got.numbers_agree()
        }
        // Requests and their records.
        "new-request-replayed" => {
            matches!(expected, Applied(_) | Overflow | Fault) && matches!(got, Replayed(_))
        }
        "new-request-conflict" => {
            matches!(expected, Applied(_) | Overflow | Fault) && *got == Conflict
        }
        "wrong-result" => matches!((expected, got), (Applied(a), Applied(b)) if a != b),
        "replay-applied-again" => matches!((expected, got), (Replayed(_), Applied(_))),
        "replay-wrong-result" => {
            matches!((expected, got), (Replayed(a), Replayed(b)) if a != b)
                || super::explorer_replay_differs(got_words)
        }
        "replay-conflict" => matches!(expected, Replayed(_)) && *got == Conflict,
        "conflict-replayed" => *expected == Conflict && matches!(got, Replayed(_)),
        "conflict-applied" => *expected == Conflict && matches!(got, Applied(_)),
        "install-not-higher" => *expected == NotHigher && *got == Installed,
        "install-refused" => *expected == Installed && *got == NotHigher,
        // What the observer read.
        "generation-differs" => matches!(
            (&facts.expected, &facts.got),
            (Observed::State { generation: a, .. }, Observed::State { generation: b, .. }) if a != b
        ),
        "value-differs" => matches!(
            (&facts.expected, &facts.got),
            (Observed::State { generation: a, value: x }, Observed::State { generation: b, value: y })
                if a == b && x != y
        ),
        "record-missing" => records(facts, |due, found| {
            found.len() < due.len() && found.iter().all(|id| due.contains(id))
        }),
        "record-on-refusal" => records(facts, |due, found| {
            found.len() > due.len() && due.iter().all(|id| found.contains(id))
        }),
        "record-differs" => match (&facts.expected, &facts.got) {
            (Observed::Records(due), Observed::Records(found)) => {
                ids(due) == ids(found) && due != found
            }
            _ => false,
        },
        "records-differ" => records(facts, |due, found| {
            due.iter().any(|id| !found.contains(id)) && found.iter().any(|id| !due.contains(id))
        }),
        // The neutral hints name the difference and nothing more.
        "fault-relabelled" => *expected == Fault && *got != Fault,
        "other-numbers" => {
            std::mem::discriminant(expected) == std::mem::discriminant(got)
                && facts.expected.answer().is_some()
                && facts.got.answer().is_some()
                && expected != got
                && *expected != Other
        }
        "answer-differs" => facts.expected != facts.got || expected_words != got_words,
        // etcd: what the worker's step shows about its token and request.
        "etcd-token-not-installed" => got_words.contains("generation never issued"),
        "etcd-done-without-applying" => {
            matches!(got, Applied(_) | Replayed(_)) && got_words.contains("apply called 0 time(s)")
        }
        "etcd-acted-without-authority" => {
            matches!(got, Applied(_))
                && !got_words.contains("apply called 0 time(s)")
                && (expected_words.contains("stop")
                    || expected_words.contains("refused")
                    || expected_words.starts_with("rejected: stale"))
        }
        "etcd-token-not-rising" => {
            got_words.starts_with("generation 1") && expected_words.contains("above")
        }
        "etcd-request-id" => {
            (matches!(expected, Replayed(_)) && matches!(got, Applied(_)))
                || matches!(
                    (&facts.expected, &facts.got),
                    (Observed::Records(_), Observed::Records(_))
                )
        }
        // The claims' own hints that say what the learner's code let
        // through (lesson 8's roles and rule): only where the step shows it.
        "L8.1" => expected_words == "refused: permission denied" && got_words == "written",
        "L8.2" => expected_words == "refused: permission denied" && got_words == "installed",
        "L8.3" => expected_words == "refused" && got_words == "written",
        // Any other claim's own hint (`L4.9`) describes what the test did
        // and asks about the claim's statement.
        _ => return None,
    })
}

/// Whether an actor the test ran while the call was paused was due
/// something and met something for which `test` holds.
fn paused_met(facts: &Facts, test: impl Fn(&Answer, &Answer) -> bool) -> bool {
    match (&facts.expected, &facts.got) {
        (Observed::Met(due), Observed::Met(met)) => {
            pairs(due, met).any(|(due, met)| test(due, met))
        }
        _ => false,
    }
}

/// Each actor's due answer beside the one it met, for the actors both
/// name.
pub(super) fn pairs<'a>(
    due: &'a [Met],
    met: &'a [Met],
) -> impl Iterator<Item = (&'a Answer, &'a Answer)> {
    due.iter().filter_map(|due| {
        met.iter()
            .find(|met| met.actor == due.actor)
            .map(|met| (&due.answer, &met.answer))
    })
}

/// Whether both sides are records and `test` holds for their requests.
fn records(facts: &Facts, test: impl Fn(&[(&str, &str)], &[(&str, &str)]) -> bool) -> bool {
    match (&facts.expected, &facts.got) {
        (Observed::Records(due), Observed::Records(found)) => test(&ids(due), &ids(found)),
        _ => false,
    }
}

/// The requests records name (resource, request id), sorted.
pub(super) fn ids(records: &[Recorded]) -> Vec<(&str, &str)> {
    let mut ids: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r.resource.as_str(), r.request_id.as_str()))
        .collect();
    ids.sort_unstable();
    ids
}
