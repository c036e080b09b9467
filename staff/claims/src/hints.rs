//! What a learner is asked when a step of a claim fails.
//!
//! A hint belongs to the step that failed, not to the claim: it is chosen by
//! [`for_step`] on what happened in the step ([`Facts`]: the call's answer,
//! the state and records read, what other actors met while the call was
//! held, where it was held), so it speaks to the behaviour the test saw
//! and never names a mistake the code may not contain. Only where the facts
//! say nothing specific (an invariant of the explorer, a worker's token on
//! etcd) does the claim's own hint ([`for_claim`]) speak.
//!
//! Every hint has three levels. Level 1, printed with the failure, is a
//! question that points at the cause. Level 2 says where to look. Level 3 is
//! the answer where the step's premise establishes the cause; where one
//! printed fact fits several mistakes, it states the fact and asks which. A
//! claim's own hint, shown when nothing more specific was seen, speaks of
//! the claim's principle only: its level 3 states the principle and asks,
//! never a fix for one particular mistake. Levels 2 and 3 are printed only
//! when asked for (`cargo grade --hint L4.9`, once for level 2, again for
//! level 3).

use crate::facts::{Answer, Facts, Met, Observed, Pause, Recorded};
use crate::{Claim, Track};

mod premise;
#[cfg(test)]
mod tests;
mod texts;

use texts::{CLAIMS, OBSERVED, POSTGRES_ANSWERS, SQL_HINTS};

/// Each claim's own hint, for a step whose observation says nothing more
/// specific: (claim, levels, levels on PostgreSQL where they differ).
type ClaimHint = (&'static str, [&'static str; 3], Option<[&'static str; 3]>);

/// A hint in three levels: a question, a pointer, the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// A short stable name (`replay-applied-again`), or a claim's id for the
    /// claim's own hint.
    pub id: &'static str,
    /// Level 1, 2 and 3.
    pub levels: [&'static str; 3],
}

impl Hint {
    /// Level `level` (1 to 3; anything above 3 is level 3, below 1 is 1).
    pub fn level(&self, level: usize) -> &'static str {
        self.levels[level.clamp(1, 3) - 1]
    }
}

/// Looks a hint up by its id: an observation's (`replay-applied-again`) or a
/// claim's (`L4.9`), on `track`.
pub fn by_id(id: &str, track: Track) -> Option<Hint> {
    OBSERVED
        .iter()
        .copied()
        .find(|hint| hint.id == id)
        .map(|hint| on_track(hint, track))
        .or_else(|| crate::claim(id).map(|claim| for_claim(claim, track)))
}

/// The hint for a failing step of `claim` on `track`, chosen on what
/// happened (`facts`): the one the observation selects, if what it takes
/// for granted holds for these facts (its premise), or else a neutral one
/// that names the difference and asks about it.
pub fn for_step(claim: &Claim, track: Track, facts: &Facts) -> Hint {
    let id = selected(claim, track, facts);
    let id = if premise::holds(id, facts) {
        id
    } else {
        neutral(facts)
    };
    by_id(id, track).unwrap_or_else(|| for_claim(claim, track))
}

/// Whether hint `id`'s premise holds for `facts`.
pub fn premise_holds(id: &str, facts: &Facts) -> bool {
    premise::holds(id, facts)
}

/// The neutral hint for a step whose selected hint takes something for
/// granted that the step does not show: a fault the call relabelled, an
/// answer of the right kind with other numbers, or another answer.
fn neutral(facts: &Facts) -> &'static str {
    if facts.expected.is(|a| *a == Answer::Fault) && !facts.got.is(|a| *a == Answer::Fault) {
        "fault-relabelled"
    } else if premise::holds("other-numbers", facts) {
        "other-numbers"
    } else {
        "answer-differs"
    }
}

/// The hint the observation selects, by id (a claim's id for its own
/// hint), before its premise is checked.
fn selected(claim: &Claim, track: Track, facts: &Facts) -> &'static str {
    let (expected, got) = (&facts.expected, &facts.got);
    // A stub or a panic says the same thing on every track.
    match got.answer() {
        Some(Answer::NotImplemented) => return "not-implemented",
        Some(Answer::Panicked) => return "panicked",
        _ => {}
    }
    // The call was paused between two of its own transactions (another
    // actor acted there), and the step failed.
    if track != Track::Etcd && facts.held_at(Pause::BetweenTransactions) {
        return "decided-in-another-transaction";
    }
    // Two different requests at once, both answered applied, and the value
    // is not where both effects put it: one effect was lost.
    if premise::holds("lost-update", facts) {
        return "lost-update";
    }
    // On etcd the destination is the lab's reference; what a step shows is
    // what the learner's worker did with its token and its request id.
    if track == Track::Etcd {
        // What the observer read (a value the worker's job never wrote)
        // speaks for itself before the claim's own hint, which assumes
        // the job ran.
        return etcd(facts).or_else(|| observed(facts)).unwrap_or(claim.id);
    }
    // An install got in while the call was paused after a read, and the
    // call then met contention: the install had committed by then, so the
    // call could not take the lock it had put off taking.
    if facts.held_at(Pause::InstallGotIn) && got.is(|a| *a == Answer::Contention) {
        return "lock-taken-after-the-read";
    }
    // The step's call found the worker's own temporary relations where it
    // looked for the lab's tables: the claim's own hint speaks to that.
    if facts.held_at(Pause::WorkerRelations) {
        return claim.id;
    }
    // The test ran another actor while a call of the learner's was paused,
    // and expected it to meet that call's lock.
    if facts.held_at(Pause::OthersActed) && expected.is(|a| *a == Answer::Contention) {
        if facts.words.1.contains("generation was read while") {
            return "read-without-lock";
        }
        match got.answer() {
            Some(Answer::Contention) | None => {}
            Some(Answer::Applied(_) | Answer::Installed) => return "lock-not-held",
            Some(answer) if answer.verdict() => return "contention-answered",
            Some(_) => {}
        }
    }
    // An explorer's schedule whose first broken invariant is a retry
    // answered with another result than the original (`replay: worker 1's
    // retry returned 11, the original result was 1`).
    if explorer_replay_differs(&facts.words.1) {
        return "replay-wrong-result";
    }
    observed(facts).unwrap_or(claim.id)
}

/// Whether an explorer's `got` starts with a retry answered with another
/// result than the original: the words of its replay invariant.
fn explorer_replay_differs(got: &str) -> bool {
    got.strip_prefix("replay: ").is_some_and(|rest| {
        let first = rest.split("; ").next().unwrap_or_default();
        first.contains("'s retry returned ") && first.contains(", the original result was ")
    })
}

/// What an etcd worker's step shows: a token never installed, a worker that
/// acted once it no longer held the authority, a token that does not rise,
/// a retry that was not the same request. A worker's report is prose; its
/// answer is read as an answer, the rest as its words.
fn etcd(facts: &Facts) -> Option<&'static str> {
    let (expected, got) = (&facts.expected, &facts.got);
    let (expected_words, got_words) = (&facts.words.0, &facts.words.1);
    let applied = got.is(|a| matches!(a, Answer::Applied(_)));
    let done = applied || got.is(|a| matches!(a, Answer::Replayed(_)));
    Some(if got_words.contains("generation never issued") {
        "etcd-token-not-installed"
    } else if done && got_words.contains("apply called 0 time(s)") {
        "etcd-done-without-applying"
    } else if applied
        && (expected_words.contains("stop")
            || expected_words.contains("refused")
            || expected_words.starts_with("rejected: stale"))
    {
        "etcd-acted-without-authority"
    } else if got_words.starts_with("generation 1") && expected_words.contains("above") {
        "etcd-token-not-rising"
    } else if expected.is(|a| matches!(a, Answer::Replayed(_))) && applied
        || matches!(
            (expected, got),
            (Observed::Records(_), Observed::Records(_))
        )
    {
        "etcd-request-id"
    } else {
        return None;
    })
}

/// The claim's own hint, for a step whose observation says nothing more
/// specific.
pub fn for_claim(claim: &Claim, track: Track) -> Hint {
    let levels = CLAIMS
        .iter()
        .find(|(id, _, _)| *id == claim.id)
        .map(|&(_, levels, postgres)| match (track, postgres) {
            (Track::Postgres, Some(postgres)) => postgres,
            _ => levels,
        })
        .unwrap_or([
            "Which part of the claim's statement does the step's `got` contradict?",
            "Run the claim's tests alone (`cargo test lX_Y_`) and follow the failing step.",
            "Compare the step with the claim's statement line by line.",
        ]);
    Hint {
        id: claim.id,
        levels,
    }
}

/// A hint whose answer names SQLite's lock reads PostgreSQL's on that track;
/// on the SQL functions' track, a hint that names the lab's Rust API reads
/// in PL/pgSQL.
fn on_track(hint: Hint, track: Track) -> Hint {
    if track == Track::PostgresSql {
        let Some((_, sql)) = SQL_HINTS.iter().find(|(id, _)| *id == hint.id) else {
            return hint;
        };
        let mut levels = hint.levels;
        for (level, sql) in levels.iter_mut().zip(sql) {
            if let Some(sql) = sql {
                *level = sql;
            }
        }
        return Hint { levels, ..hint };
    }
    match (
        track,
        POSTGRES_ANSWERS.iter().find(|(id, _)| *id == hint.id),
    ) {
        (Track::Postgres, Some(&(_, answer))) => Hint {
            levels: [hint.levels[0], hint.levels[1], answer],
            ..hint
        },
        _ => hint,
    }
}

/// Which observation hint fits a step, by what was expected and what
/// came of it; `None` when the observation alone says nothing specific.
fn observed(facts: &Facts) -> Option<&'static str> {
    use Answer::*;
    let (expected, got) = (&facts.expected, &facts.got);
    match (expected, got) {
        (Observed::State { generation: a, .. }, Observed::State { generation: b, .. }) => {
            return Some(if a == b {
                "value-differs"
            } else {
                "generation-differs"
            });
        }
        (Observed::Records(due), Observed::Records(found)) => return Some(records(due, found)),
        (Observed::Met(due), Observed::Met(met)) => return paused(due, met),
        (Observed::Met(_), Observed::NeverReached) => return Some("checkpoint-not-reached"),
        _ => {}
    }
    // Anything else that is not an answer (a state where an answer was
    // due) is, as far as the answer goes, some other answer.
    let (expected, got) = (
        expected.answer().unwrap_or(&Other),
        got.answer().unwrap_or(&Other),
    );
    Some(match (expected, got) {
        (_, DuplicateKey) => "duplicate-insert",
        // Input that is never valid, met by a database constraint instead of
        // a check of the function's own.
        (BadInput, _) => "bad-input",
        (IdTooLong, _) => "id-too-long-not-refused",
        (_, DatabaseError) => "database-error",
        (_, NotAllowed) => "not-allowed",
        (Contention, Contention) => return None,
        (_, Contention) => "unexpected-contention",
        (Contention, _) => "contention-answered",
        // A new request, due to reach its writes, taken for an earlier one.
        (Applied(_) | Fault | Overflow, Replayed(_)) => "new-request-replayed",
        (Applied(_) | Fault | Overflow, Conflict) => "new-request-conflict",
        (Overflow, _) => "overflow",
        // A request seen before is answered from its record, whatever its
        // delta would do to the value now.
        (Conflict | Replayed(_), Overflow) => "overflow-before-record",
        (_, BadInput | IdTooLong | Overflow) => "valid-input-refused",
        (Unknown, _) => "unknown-resource",
        (_, Unknown) => "known-resource-refused",
        (Stale(_) | NeverIssued(_), Replayed(_)) => "stale-replayed",
        (Stale(_) | NeverIssued(_), Conflict) => "stale-compared-with-record",
        (Stale(_), NeverIssued(_)) | (NeverIssued(_), Stale(_)) => "stale-or-never-issued",
        (Stale(_) | NeverIssued(_), _) => "generation-accepted",
        // A refusal whose own numbers say the presented generation is the
        // installed one: not a comparison with the wrong generation.
        (Applied(_) | Replayed(_), got) if got.refused_by_generation() && got.numbers_agree() => {
            "refusal-numbers-agree"
        }
        (Applied(_) | Replayed(_) | Fault, got) if got.refused_by_generation() => "current-refused",
        // The fault was swallowed: the call answered as if its writes
        // had all gone in.
        (Fault, Applied(_) | Installed) => "fault-relabelled",
        (Applied(_), Applied(_)) => "wrong-result",
        (Replayed(_), Applied(_)) => "replay-applied-again",
        (Replayed(_), Replayed(_)) => "replay-wrong-result",
        (Replayed(_), Conflict) => "replay-conflict",
        (Conflict, Replayed(_)) => "conflict-replayed",
        (Conflict, Applied(_)) => "conflict-applied",
        (NotHigher, Installed) => "install-not-higher",
        (Installed, NotHigher) => "install-refused",
        _ => return None,
    })
}

/// What the actors the test ran while a call was paused met, against what
/// each should have met: one that got through a lock the call should have
/// held (`lock-not-held`), one answered with a verdict where the lock
/// should have said contention (`contention-answered`), or one kept out of
/// what the call does not touch (`lock-too-wide`).
fn paused(due: &[Met], met: &[Met]) -> Option<&'static str> {
    let mut found = None;
    for (due, met) in premise::pairs(due, met) {
        if *due == Answer::Contention && met.through() {
            return Some("lock-not-held");
        }
        if *due == Answer::Contention && *met != Answer::Contention {
            found = Some("contention-answered");
        }
        if due.through() && *met == Answer::Contention {
            found = found.or(Some("lock-too-wide"));
        }
    }
    found
}

/// Which records hint fits: none where some were due, some where none were,
/// or the same requests with other contents.
fn records(due: &[Recorded], found: &[Recorded]) -> &'static str {
    let (due_ids, found_ids) = (premise::ids(due), premise::ids(found));
    let within =
        |small: &[(&str, &str)], large: &[(&str, &str)]| small.iter().all(|id| large.contains(id));
    if due_ids == found_ids {
        "record-differs"
    } else if within(&found_ids, &due_ids) {
        "record-missing"
    } else if within(&due_ids, &found_ids) {
        "record-on-refusal"
    } else {
        "records-differ"
    }
}
