//! Steps as the committed mutants fail them, and the hint each gets.

use super::*;
use crate::facts::words::*;

fn hint(claim: &str, track: Track, step: &str, expected: &str, got: &str) -> &'static str {
    shown(claim, track, step, expected, got).id
}

/// The hint a step gets whose facts are read from its words.
fn shown(claim: &str, track: Track, step: &str, expected: &str, got: &str) -> Hint {
    for_step(
        crate::claim(claim).unwrap(),
        track,
        &Facts::read(step, expected, got),
    )
}

/// Whether `id`'s premise holds for a step read from its words.
fn holds(id: &str, step: &str, expected: &str, got: &str) -> bool {
    premise_holds(id, &Facts::read(step, expected, got))
}

/// The requests the records of a line name, as `resource id`.
fn record_ids(line: &str) -> Vec<String> {
    match crate::facts::words::observed(line) {
        Observed::Records(records) => premise::ids(&records)
            .into_iter()
            .map(|(resource, id)| format!("{resource} {id}"))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_stub_is_a_stub_on_every_track() {
    let got = "apply is not implemented yet: open exercises/apply.rs";
    for track in Track::ALL {
        assert_eq!(
            hint("L1.1", track, "apply", "applied, result 5", got),
            "not-implemented"
        );
    }
}

#[test]
fn generation_hints_follow_what_was_answered() {
    let stale = "rejected: stale generation: presented 1, installed 2";
    let never = "rejected: generation never issued: presented 3, installed 2";
    let s = Track::Sqlite;
    assert_eq!(
        hint("L2.2", s, "apply", never, "applied, result 1"),
        "generation-accepted"
    );
    assert_eq!(
        hint("L2.2", s, "apply", never, stale),
        "stale-or-never-issued"
    );
    assert_eq!(
        hint("L4.9", s, "apply", stale, "replayed, original result 5"),
        "stale-replayed"
    );
    assert_eq!(
        hint("L2.3", s, "apply", "applied, result 5", stale),
        "current-refused"
    );
}

#[test]
fn duplicate_hints_follow_what_was_answered() {
    let s = Track::Sqlite;
    let replay = |result: i64| format!("replayed, original result {result}");
    assert_eq!(
        hint("L4.2", s, "apply", &replay(7), &replay(12)),
        "replay-wrong-result"
    );
    assert_eq!(
        hint("L4.1", s, "apply", &replay(5), "applied, result 10"),
        "replay-applied-again"
    );
    assert_eq!(
        hint("L4.11", s, "apply", "applied, result 14", &replay(7)),
        "new-request-replayed"
    );
    let conflict =
        "rejected: conflicting request \"r1\": recorded with delta 7, presented with delta 9";
    assert_eq!(
        hint("L4.3", s, "apply", conflict, &replay(7)),
        "conflict-replayed"
    );
    let unique = "database error: UNIQUE constraint failed: requests.resource, requests.request_id";
    assert_eq!(
        hint("L4.7", s, "apply", &replay(5), unique),
        "duplicate-insert"
    );
    // A model step that delivered twice: the differing half decides.
    assert_eq!(
        hint(
            "L2.7",
            s,
            "case 2",
            "applied, result 0 and replayed, original result 0",
            &format!("applied, result 0 and {unique}")
        ),
        "duplicate-insert"
    );
}

#[test]
fn input_hints_do_not_blame_apply_for_install() {
    let s = Track::Sqlite;
    let below = "rejected: generation must be at least 1, got 0";
    assert_eq!(
        hint(
            "L6.1",
            s,
            "install_generation(fund-A, 0)",
            below,
            "installed"
        ),
        "bad-input"
    );
    let check = "database error: CHECK constraint failed: request_id <> ''";
    assert_eq!(
        hint("L6.1", s, "apply", "rejected: empty request id", check),
        "bad-input"
    );
    let overflow = "rejected: value overflow: 5 + 9223372036854775807 does not fit in an i64";
    assert_eq!(
        hint(
            "L6.1",
            s,
            "apply",
            overflow,
            "applied, result -9223372036854775804"
        ),
        "overflow"
    );
}

#[test]
fn records_and_state_hints_say_which_way_they_differ() {
    let s = Track::Sqlite;
    let r0 = "fund-A r0 delta +5 result 5 generation 2";
    let r1 = "fund-A r1 delta +5 result 10 generation 2";
    assert_eq!(
        hint("L1.2", s, "records of fund-A", r0, "no records"),
        "record-missing"
    );
    assert_eq!(
        hint("L4.8", s, "records of fund-A", r0, &format!("{r0}; {r1}")),
        "record-on-refusal"
    );
    let rewritten = "fund-A r0 delta +5 result 5 generation 3";
    assert_eq!(
        hint("L4.7", s, "records of fund-A", r0, rewritten),
        "record-differs"
    );
    assert_eq!(
        hint(
            "L5.1",
            s,
            "observe fund-A",
            "generation 1, value 2",
            "generation 1, value 7"
        ),
        "value-differs"
    );
}

#[test]
fn paused_hints_tell_a_lock_held_too_little_from_too_wide() {
    let p = Track::Postgres;
    let held = "contention: another connection holds the lock";
    let expected = format!("probe fund-A: {held}; install fund-A: {held}");
    let through = "probe fund-A: acquired the row lock; install fund-A: installed";
    assert_eq!(
        hint("L3.2", p, "while apply was paused", &expected, through),
        "lock-not-held"
    );
    let stale = format!(
        "probe fund-A: {held}; install fund-A: rejected: stale generation: presented 1, installed 2"
    );
    assert_eq!(
        hint(
            "L3.3",
            p,
            "while install_generation was paused",
            &expected,
            &stale
        ),
        "contention-answered"
    );
    let wide = format!("probe fund-A: {held}; probe fund-B: acquired the row lock");
    let narrow = format!("probe fund-A: {held}; probe fund-B: {held}");
    assert_eq!(
        hint("L3.7", p, "while apply was paused", &wide, &narrow),
        "lock-too-wide"
    );
    assert_eq!(
        hint(
            "L1.4",
            p,
            "the authority's process, while worker 1 is paused",
            held,
            "installed"
        ),
        "lock-not-held"
    );
}

#[test]
fn etcd_hints_speak_of_the_worker_not_of_apply() {
    let e = Track::Etcd;
    let never = "rejected: generation never issued: presented 6, installed 1";
    assert_eq!(
        hint("L7.1", e, "worker 2's job", "applied, result 3", never),
        "etcd-token-not-installed"
    );
    let stop = "it stops (LabError::Superseded) and never calls apply";
    assert_eq!(
        hint(
            "L7.4",
            e,
            "worker 1, woken",
            stop,
            "applied, result 8; apply called 1 time(s)"
        ),
        "etcd-acted-without-authority"
    );
    assert_eq!(
        hint(
            "L7.3",
            e,
            "worker 2",
            "a generation above worker 1's 1",
            "generation 1"
        ),
        "etcd-token-not-rising"
    );
    assert_eq!(
        hint(
            "L7.5",
            e,
            "the retry",
            "replayed, original result 5",
            "applied, result 13"
        ),
        "etcd-request-id"
    );
    let superseded = "stopped: superseded: this worker's token is 4985100220423714140, the destination has 4985100220423714146 installed";
    assert_eq!(
        hint(
            "L7.6",
            e,
            "the late worker",
            "applied, result 8",
            superseded
        ),
        "L7.6"
    );
}

#[test]
fn sql_hints_speak_of_the_roles_and_the_search_path() {
    let q = Track::PostgresSql;
    let stale = "rejected: stale generation: presented 1, installed 2";
    // mutant-no-fixed-search-path: the worker's view is read.
    let shadowed =
        format!("apply(fund-A, generation 1, \"r2\", +1000) {WORKER_TEMPORARY_RELATIONS}");
    assert_eq!(
        hint("L8.5", q, &shadowed, stale, "applied, result 1000"),
        "L8.5"
    );
    // The same answer without the relations is the generation's hint.
    let plain = "apply(fund-A, generation 1, \"r1\", +1000)";
    assert_eq!(
        hint("L8.5", q, plain, stale, "applied, result 1000"),
        "generation-accepted"
    );
    // mutant-authority-granted-apply-and-tables: the authority's apply
    // runs, and its own write goes through.
    let denied = "refused: permission denied";
    assert_eq!(
        hint(
            "L8.6",
            q,
            "the authority calls apply(fund-A, generation 2, \"r2\", +1000)",
            denied,
            "applied, result 1005"
        ),
        "L8.6"
    );
    assert_eq!(
        hint(
            "L8.6",
            q,
            "the authority's own UPDATE resources SET value = 1000",
            denied,
            "written"
        ),
        "L8.6"
    );
}

/// The steps issue 29 met, where the hint once said what the step did not
/// show: each now gets a hint whose premise holds.
#[test]
fn a_hint_never_says_what_the_step_does_not_show() {
    let s = Track::Sqlite;
    // A refusal of the right kind with other numbers: nothing was accepted.
    assert_eq!(
        hint(
            "L1.1",
            s,
            "apply(fund-A, generation 1, \"r2\", +5)",
            "rejected: stale generation: presented 1, installed 2",
            "rejected: stale generation: presented 1, installed 1"
        ),
        "other-numbers"
    );
    // A fault the call relabelled, as contention or as a refusal.
    let fault = "injected fault: between the value and the record";
    for got in [
        "contention: another connection holds the lock",
        "rejected: stale generation: presented 1, installed 1",
    ] {
        assert_eq!(
            hint(
                "L5.1",
                s,
                "apply(fund-A, generation 1, \"r1\", +5)",
                fault,
                got
            ),
            "fault-relabelled"
        );
    }
    // The same requests recorded, one with another result.
    assert_eq!(
        hint(
            "L4.1",
            s,
            "records of fund-A",
            "fund-A r1 delta +5 result 5 generation 1",
            "fund-A r1 delta +5 result 0 generation 1"
        ),
        "record-differs"
    );
    // Two requests at once whose line tells answers, value and records.
    let due = "r1-1 -> applied, result 5; r2-1 -> applied, result 15; value 15; records: fund-A r1-1 delta +5 result 5 generation 1; fund-A r2-1 delta +10 result 15 generation 1 (or r2-1 first)";
    let lost = "r1-1 -> applied, result 5; r2-1 -> applied, result 10; value 5; records: fund-A r1-1 delta +5 result 5 generation 1; fund-A r2-1 delta +10 result 10 generation 1";
    assert_eq!(
        hint(
            "L3.8",
            s,
            "r1-1 paused after the generation was read (its checkpoint 1) while r2-1 ran to its end",
            due,
            lost
        ),
        "lost-update"
    );
}

/// The etcd stub never commits: L7.5's observation of the value its first
/// attempt should have written asks about that value, not about a retry.
#[test]
fn a_fault_answered_as_applied_is_a_fault_relabelled() {
    assert_eq!(
        hint(
            "L4.8",
            Track::Sqlite,
            "apply(fund-A, generation 2, \"r1\", +5)",
            "injected fault between the value and the record",
            "applied, result 10"
        ),
        "fault-relabelled"
    );
}

#[test]
fn an_explorer_retry_with_another_result_asks_where_the_replay_comes_from() {
    let got = "replay: worker 1's retry returned 11, the original result was 1";
    assert_eq!(
        hint(
            "L1.3",
            Track::Sqlite,
            "schedule 12 of 380",
            "every invariant kept",
            got
        ),
        "replay-wrong-result"
    );
    // Another invariant first: the claim's own hint.
    let fenced =
        "fenced: worker 2's write of +10 committed while generation 2 was installed (it held 1)";
    assert_eq!(
        hint(
            "L1.3",
            Track::Sqlite,
            "schedule 3 of 380",
            "every invariant kept",
            fenced
        ),
        "L1.3"
    );
}

#[test]
fn an_etcd_job_reported_done_without_apply_is_named_as_such() {
    let stop = "it stops (LabError::Superseded) and never calls apply";
    for got in [
        "applied, result 8; apply called 0 time(s)",
        "replayed, original result 3; apply called 0 time(s)",
    ] {
        assert_eq!(
            hint("L7.4", Track::Etcd, "worker 1, woken", stop, got),
            "etcd-done-without-applying"
        );
    }
}

#[test]
fn an_etcd_step_that_reads_a_value_asks_about_the_value() {
    assert_eq!(
        hint(
            "L7.5",
            Track::Etcd,
            "observe fund-A",
            "generation 1, value 5",
            "generation 1, value 0"
        ),
        "value-differs"
    );
}

/// L8.2's own hint says a worker's call ran; where the authority's own
/// install was refused instead, the step shows no such thing.
#[test]
fn lesson_8_hints_say_what_was_let_through_only_where_it_was() {
    let q = Track::PostgresSql;
    assert_eq!(
        hint(
            "L8.2",
            q,
            "the worker calls install_generation(fund-A, 2)",
            "refused: permission denied",
            "installed"
        ),
        "L8.2"
    );
    assert_eq!(
        hint(
            "L8.2",
            q,
            "the authority calls install_generation(fund-A, 2)",
            "installed",
            "refused: permission denied"
        ),
        "answer-differs"
    );
}

#[test]
fn every_observation_hint_has_a_premise() {
    for hint in OBSERVED {
        assert!(
            premise::written_for(hint.id),
            "{} has no premise in hints/premise.rs",
            hint.id
        );
    }
}

#[test]
fn every_hint_has_three_levels_and_a_claim_hint_for_every_claim() {
    for hint in OBSERVED {
        assert!(
            hint.levels.iter().all(|level| !level.is_empty()),
            "{}",
            hint.id
        );
        assert!(hint.levels[0].ends_with('?'), "{}'s level 1 asks", hint.id);
    }
    for claim in crate::CLAIMS {
        assert!(
            CLAIMS.iter().any(|(id, _, _)| *id == claim.id),
            "{} has no hint",
            claim.id
        );
    }
}

/// A claim's own hint is shown where no observation says what went wrong,
/// so it may take no mistake for granted: its level 3 states the claim's
/// principle and asks, and no sentence of it tells the learner what to do
/// (an order such as "Take the write lock before reading" presumes the
/// code did otherwise).
#[test]
fn a_claims_own_hint_states_its_principle_and_asks() {
    // Verbs that open an order in the hints' words.
    const ORDERS: &[&str] = &[
        "accept", "act", "add", "answer", "begin", "check", "commit", "compare", "follow", "give",
        "grant", "insert", "install", "keep", "key", "let", "lock", "look", "make", "pass",
        "present", "read", "record", "refuse", "remove", "replace", "return", "revoke", "store",
        "take", "use", "write",
    ];
    let hints = CLAIMS.iter().flat_map(|(id, levels, postgres)| {
        std::iter::once((*id, levels)).chain(postgres.iter().map(move |levels| (*id, levels)))
    });
    for (id, [first, _, third]) in hints {
        assert!(first.ends_with('?'), "{id}'s level 1 asks: {first}");
        assert!(
            third.ends_with('?'),
            "{id}'s level 3 ends with a question: {third}"
        );
        let sentences: Vec<&str> = third
            .split_inclusive(['.', '?', ';'])
            .map(str::trim)
            .filter(|sentence| !sentence.is_empty())
            .collect();
        assert!(
            sentences.iter().any(|sentence| !sentence.ends_with('?')),
            "{id}'s level 3 states the principle before it asks: {third}"
        );
        for sentence in sentences {
            let word = sentence
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .find(|word| !word.is_empty())
                .unwrap_or_default()
                .to_lowercase();
            assert!(
                !ORDERS.contains(&word.as_str()),
                "{id}'s level 3 gives an order (\"{sentence}\"): it would take a mistake for granted"
            );
        }
    }
}

/// Issue 38: a refusal whose own numbers say the presented generation is
/// the installed one did not come from comparing with the wrong
/// generation; `current-refused` is kept for a refusal that names another.
#[test]
fn a_refusal_whose_numbers_agree_is_not_a_wrong_comparison() {
    let step = "apply(fund-A, generation 1, \"r1\", +5)";
    let agree = "rejected: stale generation: presented 1, installed 1";
    let never = "rejected: generation never issued: presented 2, installed 2";
    for got in [agree, never] {
        assert_eq!(
            hint("L2.3", Track::Sqlite, step, "applied, result 5", got),
            "refusal-numbers-agree"
        );
        assert!(!holds("current-refused", step, "applied, result 5", got));
    }
    assert_eq!(
        hint(
            "L4.9",
            Track::Postgres,
            step,
            "replayed, original result 5",
            agree
        ),
        "refusal-numbers-agree"
    );
    let other = "rejected: stale generation: presented 1, installed 2";
    assert_eq!(
        hint("L2.3", Track::Sqlite, step, "applied, result 5", other),
        "current-refused"
    );
    assert!(!holds(
        "refusal-numbers-agree",
        step,
        "applied, result 5",
        other
    ));
}

/// Issue 38: a stale request answered as a replay may have met a record
/// looked up before the generation, or a record a refused call should never
/// have stored. The hint says what the step shows and asks which; it does
/// not pick one.
#[test]
fn a_stale_request_replayed_is_asked_about_not_explained() {
    let shown = shown(
        "L4.9",
        Track::Sqlite,
        "apply(fund-A, generation 1, \"a-1\", +5)",
        "rejected: stale generation: presented 1, installed 2",
        "replayed, original result 5",
    );
    assert_eq!(shown.id, "stale-replayed");
    let third = shown.level(3);
    assert!(third.ends_with('?'), "{third}");
    for cause in ["before it checked the generation", "should not have stored"] {
        assert!(
            third.contains(cause),
            "level 3 asks about {cause:?}: {third}"
        );
    }
    for level in shown.levels {
        assert!(
            !level.contains("look the record up only once"),
            "no level prescribes one order: {level}"
        );
    }
}

/// Issue 38: L4.10 on PostgreSQL prints `one record: …` where it expected
/// and `records: …` where it got; the same request recorded with another
/// result is the same ids with other contents.
#[test]
fn one_record_and_records_lines_are_read_alike() {
    let expected = "one delivery applied, result 2, the other replayed, original result 2 (contention tried again); value 2; one record: fund-A r2 delta +1 result 2 generation 1";
    let got = "first delivery: applied, result 2; second: replayed, original result 2; value 2; records: fund-A r2 delta +1 result 3 generation 1";
    assert_eq!(record_ids(expected), ["fund-A r2"]);
    assert_eq!(record_ids(got), ["fund-A r2"]);
    let step = "apply(fund-A, generation 1, \"r2\", +1) delivered twice: the first paused at its checkpoint 2 (after the record was looked up), the second run to its end meanwhile";
    assert_eq!(
        hint("L4.10", Track::Postgres, step, expected, got),
        "record-differs"
    );
    // The same record where the answers differ: no record holds other
    // contents, so the record's hint is not shown.
    let same = "first delivery: applied, result 2; second: contention, then contention, then contention, then contention; value 2; records: fund-A r2 delta +1 result 2 generation 1";
    assert!(!holds("record-differs", step, expected, same));
    assert_ne!(
        hint("L4.10", Track::Postgres, step, expected, same),
        "record-differs"
    );
    // No records at all, as that step prints it.
    let none = "first delivery: applied, result 2; second: replayed, original result 2; value 2; records: none";
    assert!(record_ids(none).is_empty());
}

/// Issue 38: what the lab's connections did is told in the order the
/// database saw it, and a hint that says another install had committed
/// holds only where one did.
#[test]
fn a_call_overtaken_by_a_commit_is_told_in_the_databases_order() {
    use crate::facts::{Call, Checkpoint, Event};
    let apply = Call::Apply {
        resource: "fund-A".to_owned(),
        generation: 1,
        request_id: "r1".to_owned(),
        delta: 5,
    };
    let install = Call::Install {
        resource: "fund-A".to_owned(),
        generation: 2,
    };
    let run = |install_commits: bool| {
        let mut events = vec![
            Event::Called {
                actor: 1,
                call: apply.clone(),
            },
            Event::Reached {
                actor: 1,
                at: Checkpoint::GenerationRead,
            },
            Event::Called {
                actor: 2,
                call: install.clone(),
            },
            Event::Ended {
                actor: 2,
                committed: install_commits,
                wrote: true,
                installed: Some(if install_commits { 2 } else { 1 }),
            },
            Event::Answered {
                actor: 2,
                answer: Answer::Installed,
            },
            Event::Ended {
                actor: 1,
                committed: false,
                wrote: false,
                installed: Some(2),
            },
            Event::Answered {
                actor: 1,
                answer: Answer::Contention,
            },
        ];
        if !install_commits {
            events.retain(|event| !matches!(event, Event::Answered { actor: 2, .. }));
        }
        let step = format!(
            "apply(fund-A, generation 1, \"r1\", +5), paused after the generation was read {INSTALL_GOT_IN}"
        );
        Facts {
            events,
            names: vec![(1, "worker A".to_owned()), (2, "authority".to_owned())],
            ..Facts::read(
                &step,
                "rejected: stale generation: presented 1, installed 2",
                "contention: another connection holds the lock",
            )
        }
    };
    let overtaken = run(true);
    assert_eq!(
        overtaken.happened().as_deref(),
        Some(
            "worker A: apply(fund-A, generation 1, \"r1\", +5), read the generation, \
             authority: install_generation(fund-A, 2), committed (generation 2 installed), \
             answered installed, worker A: rolled back, answered contention"
        )
    );
    assert!(premise_holds("lock-taken-after-the-read", &overtaken));
    // The same words where the other connection committed nothing: the
    // hint's "that install had committed" would be false.
    assert!(!premise_holds("lock-taken-after-the-read", &run(false)));
}

/// The events travel to the grader on one line and come back whole,
/// whatever a request id holds.
#[test]
fn events_cross_the_verdict_channel_whole() {
    use crate::facts::{Call, Checkpoint, Event, wire};
    let names = vec![
        (1, "worker A".to_owned()),
        (2, "r; 1, 100%'s worker".to_owned()),
    ];
    let mut events = vec![
        Event::Called {
            actor: 2,
            call: Call::Apply {
                resource: "fund-A".to_owned(),
                generation: 10,
                request_id: "x' OR '1'='1; -- %0A\n,".to_owned(),
                delta: -5,
            },
        },
        Event::Called {
            actor: 1,
            call: Call::Install {
                resource: "fund-B".to_owned(),
                generation: 3,
            },
        },
        Event::Called {
            actor: 3,
            call: Call::DirectWrite {
                resource: "fund-A".to_owned(),
                value: 100,
            },
        },
        Event::Called {
            actor: 3,
            call: Call::Restore {
                resource: "fund-A".to_owned(),
                generation: 1,
            },
        },
        Event::Resumed { actor: 2 },
        Event::Ended {
            actor: 1,
            committed: true,
            wrote: true,
            installed: Some(3),
        },
        Event::Ended {
            actor: 2,
            committed: false,
            wrote: false,
            installed: None,
        },
    ];
    for (_, at) in [
        (0, Checkpoint::GenerationRead),
        (1, Checkpoint::TransactionEnded),
    ] {
        events.push(Event::Reached { actor: 1, at });
    }
    for answer in [
        Answer::Applied(-4),
        Answer::Replayed(7),
        Answer::Stale(Some((1, 2))),
        Answer::NeverIssued(None),
        Answer::Contention,
        Answer::Written,
        Answer::Panicked,
        Answer::Other,
    ] {
        events.push(Event::Answered { actor: 1, answer });
    }
    let line = wire::encode(&names, &events);
    assert!(!line.contains('\n'), "{line}");
    assert_eq!(wire::decode(&line), Some((names, events)));
    assert_eq!(wire::decode("X,1"), None);
}

/// What the test and etcd did on the etcd track crosses the channel too.
#[test]
fn the_etcd_track_s_events_cross_the_verdict_channel_whole() {
    use crate::facts::{Coordination, Event, wire};
    let names = vec![(1, "test".to_owned()), (2, "worker 1".to_owned())];
    let events: Vec<Event> = [
        Coordination::Locked,
        Coordination::Froze { worker: 2 },
        Coordination::LeaseEnded { worker: 2 },
        Coordination::Woke { worker: 2 },
        Coordination::Killed { worker: 2 },
        Coordination::LeaderReplaced,
    ]
    .into_iter()
    .map(|what| Event::Coordinated { actor: 1, what })
    .collect();
    let line = wire::encode(&names, &events);
    assert_eq!(wire::decode(&line), Some((names, events)));
    assert_eq!(wire::decode("K,1,froze"), None);
}
