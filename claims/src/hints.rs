//! What a learner is asked when a step of a claim fails.
//!
//! A hint belongs to the step that failed, not to the claim: it is chosen by
//! [`for_step`] from what the step expected and what it got, the two lines a
//! failure prints, so it speaks to the behaviour the test saw and never
//! names a mistake the code may not contain. Only where the observation says
//! nothing specific (an invariant of the explorer, a worker's token on etcd)
//! does the claim's own hint ([`for_claim`]) speak.
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

/// The words of the checkpoint between two transactions of one call, as
/// its `Display` prints them; a step that paused there names them.
pub const TRANSACTION_ENDED: &str = "after one of its transactions ended";

/// What a step says when the test's install got in while the call was
/// paused at a read: the pause fell before the check that decided, or the
/// call read without its lock.
pub const INSTALL_GOT_IN: &str = "and another install got in";

/// The words a step ends with when the worker's own temporary relations,
/// named like the lab's tables, are in place (lesson L8). Such a step
/// follows the same call made without them, which passed: when it fails,
/// the relations made the difference.
pub const WORKER_TEMPORARY_RELATIONS: &str = "with the worker's temporary relations in place";

/// The hint for a step of `claim` on `track` (what the test did, `step`)
/// that expected `expected` and got `got`, all three as the failure prints
/// them: the one the observation selects, if what it takes for granted
/// holds for this step ([`premise`]), or else a neutral one that names the
/// printed difference and asks about it.
pub fn for_step(claim: &Claim, track: Track, step: &str, expected: &str, got: &str) -> Hint {
    let id = selected(claim, track, step, expected, got);
    let shown = premise::Step::new(step, expected, got);
    let id = if premise::holds(id, &shown) {
        id
    } else {
        neutral(&shown)
    };
    by_id(id, track).unwrap_or_else(|| for_claim(claim, track))
}

/// Whether hint `id`'s premise holds for a step that printed `step`,
/// `expected` and `got`: what `.ci/hint-premises` asks of every failure a
/// graded run printed.
pub fn premise_holds(id: &str, step: &str, expected: &str, got: &str) -> bool {
    premise::holds(id, &premise::Step::new(step, expected, got))
}

/// The neutral hint for a step whose selected hint takes something for
/// granted that the step does not show: a fault the call relabelled, an
/// answer of the right kind with other numbers, or another answer.
fn neutral(step: &premise::Step<'_>) -> &'static str {
    let (expected, got) = (Seen::of(step.expected), Seen::of(step.got));
    if expected == Seen::Fault && got != Seen::Fault {
        "fault-relabelled"
    } else if expected == got && premise::holds("other-numbers", step) {
        "other-numbers"
    } else {
        "answer-differs"
    }
}

/// The hint the observation selects, by id (a claim's id for its own
/// hint), before its premise is checked.
fn selected(claim: &Claim, track: Track, step: &str, expected: &str, got: &str) -> &'static str {
    let seen = Seen::of(got);
    // A stub or a panic says the same thing on every track.
    match seen {
        Seen::NotImplemented => return "not-implemented",
        Seen::Panicked => return "panicked",
        _ => {}
    }
    // The step shows the call paused between two of its own transactions
    // (another actor acted there), and it failed.
    if track != Track::Etcd && step.contains(TRANSACTION_ENDED) {
        return "decided-in-another-transaction";
    }
    // Two different requests at once, both answered applied, and the value
    // is not where both effects put it: one effect was lost.
    if step.contains("ran to its end")
        && got.matches("-> applied").count() == 2
        && value_after(got) != value_after(expected)
    {
        return "lost-update";
    }
    // On etcd the destination is the lab's reference; what a step shows is
    // what the learner's worker did with its token and its request id.
    let (expected, got) = first_difference(expected, got);
    if track == Track::Etcd {
        // What the observer read (a value the worker's job never wrote)
        // speaks for itself before the claim's own hint, which assumes
        // the job ran.
        return etcd(expected, got)
            .or_else(|| observed(Seen::of(expected), Seen::of(got), expected, got))
            .unwrap_or(claim.id);
    }
    // An install got in while the call was paused after a read, and the
    // call then met contention: the install had committed by then, so the
    // call could not take the lock it had put off taking.
    if step.contains(INSTALL_GOT_IN) && Seen::of(got) == Seen::Contention {
        return "lock-taken-after-the-read";
    }
    // The step's call found the worker's own temporary relations where it
    // looked for the lab's tables: the claim's own hint speaks to that.
    if step.contains(WORKER_TEMPORARY_RELATIONS) {
        return claim.id;
    }
    let (expected_seen, got_seen) = (Seen::of(expected), Seen::of(got));
    // The test ran another actor while a call of the learner's was paused,
    // and expected it to meet that call's lock.
    if step.contains("while") && step.contains("paused") && expected_seen == Seen::Contention {
        if got.contains("generation was read while") {
            return "read-without-lock";
        }
        match got_seen {
            Seen::Contention => {}
            Seen::Applied(_) | Seen::Installed => return "lock-not-held",
            Seen::Stale
            | Seen::NeverIssued
            | Seen::NotHigher
            | Seen::Replayed(_)
            | Seen::Conflict
            | Seen::Unknown
            | Seen::Overflow
            | Seen::BadInput
            | Seen::IdTooLong => return "contention-answered",
            _ => {}
        }
    }
    // An explorer's schedule whose first broken invariant is a retry
    // answered with another result than the original (`replay: worker 1's
    // retry returned 11, the original result was 1`).
    if explorer_replay_differs(got) {
        return "replay-wrong-result";
    }
    observed(expected_seen, got_seen, expected, got).unwrap_or(claim.id)
}

/// Whether an explorer's `got` starts with a retry answered with another
/// result than the original: the words of its replay invariant.
fn explorer_replay_differs(got: &str) -> bool {
    got.strip_prefix("replay: ").is_some_and(|rest| {
        let first = rest.split("; ").next().unwrap_or_default();
        first.contains("'s retry returned ") && first.contains(", the original result was ")
    })
}

/// The number after `value ` in a step's line, if it names one.
fn value_after(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once("value ")?;
    rest.split([';', ' ']).next()
}

/// What an etcd worker's step shows: a token never installed, a worker that
/// acted once it no longer held the authority, a token that does not rise,
/// a retry that was not the same request. Both lines as
/// [`first_difference`] leaves them.
fn etcd(expected: &str, got: &str) -> Option<&'static str> {
    let applied = matches!(Seen::of(got), Seen::Applied(_));
    let done = applied || matches!(Seen::of(got), Seen::Replayed(_));
    Some(if got.contains("generation never issued") {
        "etcd-token-not-installed"
    } else if done && got.contains("apply called 0 time(s)") {
        "etcd-done-without-applying"
    } else if applied
        && (expected.contains("stop")
            || expected.contains("refused")
            || expected.starts_with("rejected: stale"))
    {
        "etcd-acted-without-authority"
    } else if got.starts_with("generation 1") && expected.contains("above") {
        "etcd-token-not-rising"
    } else if matches!(Seen::of(expected), Seen::Replayed(_)) && applied
        || matches!(
            (Seen::of(expected), Seen::of(got)),
            (Seen::Records, Seen::Records)
        )
    {
        "etcd-request-id"
    } else {
        return None;
    })
}

/// The part of a step's two lines that tells them apart: their first lines
/// (what follows is the test's detail, such as a crash test's trials), less
/// a child process's `apply returned `, and of answers joined by ` and ` (a
/// model's step that delivered twice) the first pair that differs.
fn first_difference<'a>(expected: &'a str, got: &'a str) -> (&'a str, &'a str) {
    let first = |line: &'a str| {
        let line = line.lines().next().unwrap_or_default();
        line.strip_prefix("apply returned ").unwrap_or(line)
    };
    let (expected, got) = (first(expected), first(got));
    let (expected, got) = expected
        .split(" and ")
        .zip(got.split(" and "))
        .find(|(expected, got)| expected != got)
        .unwrap_or((expected, got));
    // Answers of several callers (`r1 -> …; r2 -> …; value …`): the first
    // caller answered otherwise, less its name.
    if !(expected.contains(" -> ") && got.contains(" -> ")) {
        return (expected, got);
    }
    let answer = |part: &'a str| part.split_once(" -> ").map_or(part, |(_, answer)| answer);
    expected
        .split("; ")
        .zip(got.split("; "))
        .find(|(expected, got)| expected != got && expected.contains(" -> "))
        .map_or((expected, got), |(expected, got)| {
            (answer(expected), answer(got))
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

/// What one line of a failure says, as far as a hint cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Applied(i64),
    Replayed(i64),
    Installed,
    Stale,
    NeverIssued,
    NotHigher,
    Conflict,
    Unknown,
    Overflow,
    BadInput,
    /// A request id past the contract's length, which the destination's
    /// table refuses by itself.
    IdTooLong,
    /// The fault the test injected between a call's two writes: the call
    /// was due to get that far.
    Fault,
    Contention,
    DuplicateKey,
    DatabaseError,
    /// The lab's authorizer refused a statement of the code under test.
    NotAllowed,
    NotImplemented,
    Panicked,
    /// `generation G, value V`, the observer's view of a resource.
    State {
        generation: i64,
        value: i64,
    },
    /// A list of records (or "no records").
    Records,
    /// What a test saw while a call was paused (`probe: …; install: …`).
    Paused,
    /// The checkpoint was never reached.
    NeverReached,
    Other,
}

impl Seen {
    fn of(line: &str) -> Seen {
        let number = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit() && c != '-').next())
                .and_then(|digits| digits.parse().ok())
        };
        if let Some(result) = number("applied, result ") {
            return Seen::Applied(result);
        }
        if let Some(result) = number("replayed, original result ") {
            return Seen::Replayed(result);
        }
        if line.contains("is not implemented yet") {
            return Seen::NotImplemented;
        }
        if line.contains(" panicked: ") {
            return Seen::Panicked;
        }
        let lower = line.to_lowercase();
        let is = |text: &str| lower.starts_with(text);
        if line == "installed" {
            Seen::Installed
        } else if is("rejected: stale generation") {
            Seen::Stale
        } else if is("rejected: generation never issued") {
            Seen::NeverIssued
        } else if is("rejected: generation not higher") {
            Seen::NotHigher
        } else if is("rejected: conflicting request") {
            Seen::Conflict
        } else if is("rejected: unknown resource") {
            Seen::Unknown
        } else if is("rejected: value overflow") {
            Seen::Overflow
        } else if is("rejected: request id too long") {
            Seen::IdTooLong
        } else if is("rejected: empty request id") || is("rejected: generation must be") {
            Seen::BadInput
        } else if is("injected fault") {
            Seen::Fault
        } else if is("contention") || is("serialization failure") {
            Seen::Contention
        } else if lower.contains("unique constraint") || lower.contains("duplicate key") {
            // Anywhere in the line: an explorer's list of what each actor
            // was answered carries it after the actor's name.
            Seen::DuplicateKey
        } else if is("not allowed in the lab") {
            Seen::NotAllowed
        } else if is("database error") || is("postgresql error") {
            Seen::DatabaseError
        } else if !paused_parts(line).is_empty() {
            Seen::Paused
        } else if is("(never reached") {
            Seen::NeverReached
        } else if line == "no records" || lower.contains(" delta ") && lower.contains(" result ") {
            Seen::Records
        } else if let Some((generation, value)) = state(line) {
            Seen::State { generation, value }
        } else {
            Seen::Other
        }
    }

    fn refusal_by_generation(self) -> bool {
        matches!(self, Seen::Stale | Seen::NeverIssued)
    }
}

/// `generation G, value V`.
fn state(line: &str) -> Option<(i64, i64)> {
    let (generation, value) = line.strip_prefix("generation ")?.split_once(", value ")?;
    Some((generation.parse().ok()?, value.parse().ok()?))
}

/// Which observation hint fits a step that expected `expected` and got
/// `got`; `None` when the observation alone says nothing specific.
fn observed(
    expected: Seen,
    got: Seen,
    expected_line: &str,
    got_line: &str,
) -> Option<&'static str> {
    use Seen::*;
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
        (Stale | NeverIssued, Replayed(_)) => "stale-replayed",
        (Stale | NeverIssued, Conflict) => "stale-compared-with-record",
        (Stale, NeverIssued) | (NeverIssued, Stale) => "stale-or-never-issued",
        (Stale | NeverIssued, _) => "generation-accepted",
        // A refusal whose own numbers say the presented generation is the
        // installed one: not a comparison with the wrong generation.
        (Applied(_) | Replayed(_), got)
            if got.refusal_by_generation() && premise::refusal_numbers_agree(got_line) =>
        {
            "refusal-numbers-agree"
        }
        (Applied(_) | Replayed(_), got) if got.refusal_by_generation() => "current-refused",
        (Fault, got) if got.refusal_by_generation() => "current-refused",
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
        (
            State { generation, .. },
            State {
                generation: got, ..
            },
        ) if generation != got => "generation-differs",
        (State { .. }, State { .. }) => "value-differs",
        (Records, Records) => records(expected_line, got_line),
        (Paused, Paused) => return paused(expected_line, got_line),
        (Paused, NeverReached) => "checkpoint-not-reached",
        _ => return None,
    })
}

/// What a test did while a call was paused, part by part: `probe: …`,
/// `install fund-A: …`, `apply: …`, each with what it met.
fn paused_parts(line: &str) -> Vec<(&str, &str)> {
    line.split("; ")
        .filter_map(|part| part.split_once(": "))
        .filter(|(what, _)| {
            ["probe", "install", "apply", "the authority", "worker"]
                .iter()
                .any(|actor| {
                    what == actor
                        || what.starts_with(&format!("{actor} "))
                        || what.starts_with(&format!("{actor}'"))
                })
        })
        .collect()
}

/// What the test met while a call was paused, against what it should have
/// met: an actor that got through a lock the call should have held
/// (`lock-not-held`), one that was answered with a verdict where the lock
/// should have said contention (`contention-answered`), or one kept out of
/// what the call does not touch (`lock-too-wide`).
fn paused(expected: &str, got: &str) -> Option<&'static str> {
    let (expected, got) = (paused_parts(expected), paused_parts(got));
    let through = premise::through;
    let pairs = || {
        expected.iter().filter_map(|(what, due)| {
            got.iter()
                .find(|(other, _)| other == what)
                .map(|(_, met)| (*due, *met))
        })
    };
    let mut found = None;
    for (due, met) in pairs() {
        if due.starts_with("contention") && through(met) {
            return Some("lock-not-held");
        }
        if due.starts_with("contention") && !met.starts_with("contention") {
            found = Some("contention-answered");
        }
        if through(due) && met.starts_with("contention") {
            found = found.or(Some("lock-too-wide"));
        }
    }
    found
}

/// Which records hint fits: none where some were due, some where none were,
/// or the same requests with other contents.
fn records(expected: &str, got: &str) -> &'static str {
    let (expected_ids, got_ids) = (premise::record_ids(expected), premise::record_ids(got));
    let within = |small: &[String], large: &[String]| small.iter().all(|id| large.contains(id));
    if expected_ids == got_ids {
        "record-differs"
    } else if within(&got_ids, &expected_ids) {
        "record-missing"
    } else if within(&expected_ids, &got_ids) {
        "record-on-refusal"
    } else {
        "records-differ"
    }
}
