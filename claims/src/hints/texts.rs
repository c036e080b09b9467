//! The hints' words: what each observation and each claim asks, in three
//! levels, and how a level reads on the PostgreSQL tracks. Selection logic
//! lives in `hints.rs`; a new claim adds its hint here, nothing there.

use super::{ClaimHint, Hint};

/// The hints an observation selects, by id.
pub(super) const OBSERVED: &[Hint] = &[
    Hint {
        id: "not-implemented",
        levels: [
            "This step reached a function that still ends in `todo!()`. Which function does `got` name, and what must it return for this step?",
            "Read the claim's statement and the TODO comments of the file under `open`; they list the decisions in the order the function makes them.",
            "Replace the `todo!()`: refuse malformed input first, then make every decision inside one transaction and commit once, at the end.",
        ],
    },
    Hint {
        id: "panicked",
        levels: [
            "Your function panicked on this input instead of returning an answer. Which call in it can panic here?",
            "`unwrap`, `expect`, slicing, indexing and plain arithmetic all panic on some input. Library code turns every failure a caller can cause into a `LabError`.",
            "Use `?` where you unwrapped, `get` where you indexed, and `checked_add` (with `LabError::Overflow`) where you added.",
        ],
    },
    Hint {
        id: "duplicate-insert",
        levels: [
            "The database refused a record because one with the same key was already stored. When your apply inserted it, had it looked for that record, and could another call have stored it after the look?",
            "Two copies of one request can run at once. A lookup made before this call holds the write lock can miss a record the other copy is about to commit.",
            "Look the record up inside the transaction that writes it, after that transaction holds the write lock (BEGIN IMMEDIATE). The second copy then meets contention, retries, and finds the record: a replay.",
        ],
    },
    Hint {
        id: "database-error",
        levels: [
            "Your function returned a database error instead of an answer of the contract. Which of its statements failed, and what did that statement expect to find?",
            "Read the error in `got`: it names the statement's problem. The lab's `Tx` methods cover every statement the exercise needs.",
            "Go through `Tx`'s methods (or fix your own SQL so that it runs), and answer every case the contract defines with its own `LabError` or `Outcome`.",
        ],
    },
    Hint {
        id: "decided-in-another-transaction",
        levels: [
            "Your call paused between two of its own transactions, where it held no lock, and another actor acted there (see the step). Did your second transaction act on something only the first one had read?",
            "A commit releases every lock, and what a transaction read is history once it ends. What the second transaction writes must follow from what it reads itself, under its own lock.",
            "Check and write in one transaction (IMMEDIATE on SQLite, the row locked first on PostgreSQL), or check everything again in the transaction that writes.",
        ],
    },
    Hint {
        id: "not-allowed",
        levels: [
            "The database refused one of your statements before it ran, and `got` names it. What did you need that statement for?",
            "The code under test may read and write the lab's two tables inside its transaction, and nothing more: no schema of its own (temporary views and triggers too), no ATTACH, no PRAGMA that changes the connection, no call of the lab's own SQL functions.",
            "Remove the statement `got` names, and do what it was for with `Tx`'s methods or your own SELECT, INSERT and UPDATE on `resources` and `requests` through `tx.sql()`.",
        ],
    },
    Hint {
        id: "unexpected-contention",
        levels: [
            "Your call met contention where the test held no lock against it. Could one of your own connections or transactions still hold one?",
            "A transaction that is neither committed nor dropped keeps its lock; so does a transaction begun on a connection while another is open on a second one.",
            "Use one transaction per call, on the connection you were given, and end it (commit, or drop it to roll back) before you return.",
        ],
    },
    Hint {
        id: "contention-answered",
        levels: [
            "Another connection held the lock, and your function answered as if it had decided. What did it read while it could not hold the lock itself?",
            "When the lock is held elsewhere, the lab's calls return `LabError::Contention` at once (no waiting). It is not a verdict: the caller tries again later.",
            "Let `Contention` through unchanged with `?`, and take the lock before you read what you decide on: never turn contention into a refusal or a success.",
        ],
    },
    Hint {
        id: "overflow",
        levels: [
            "The new value does not fit in an `i64`. What does your code do when `value + delta` overflows?",
            "Plain `+` panics on overflow in a debug build and wraps in a release build; neither is an answer a caller can use. Rust's integers have additions that report overflow.",
            "`value.checked_add(delta).ok_or(LabError::Overflow { value, delta })?`, before anything is written.",
        ],
    },
    Hint {
        id: "overflow-before-record",
        levels: [
            "Your apply refused this request as an overflow, but the step expected the answer a request seen before gets (see `expected`). Which does your apply look at first: the record, or the value the delta would make?",
            "A request id already recorded is answered from its record (a replay, or a conflict when the delta differs); its delta is never added again, so whether it would fit now does not matter.",
            "Look the record up right after the generation check, and compute `value + delta` (with `checked_add`) only on the path that applies a new request.",
        ],
    },
    Hint {
        id: "bad-input",
        levels: [
            "This input is malformed (see `expected`). Where does your function check its input, and does it check this case?",
            "Input that can never be valid (an empty request id, a generation below 1) is refused before the database is touched, so nothing changes.",
            "At the top of the function: `EmptyRequestId` for an empty id, `GenerationBelowOne` for a generation below 1; then the transaction.",
        ],
    },
    Hint {
        id: "valid-input-refused",
        levels: [
            "Your function refused this input as malformed, but it is valid. Which of your checks fired, and what does it let through?",
            "Only an empty request id and a generation below 1 are malformed; an overflow is known only once the value is read.",
            "Refuse exactly `request_id.is_empty()` and `generation < 1` up front, and report `Overflow` only when `checked_add` fails.",
        ],
    },
    Hint {
        id: "unknown-resource",
        levels: [
            "The resource does not exist. What does your function do when no row is found for it?",
            "The lab's reads report a missing resource as `LabError::UnknownResource`. A row created for it would be state nobody installed.",
            "Let the error from `tx.installed_generation(resource)?` through with `?`, and never insert a resource.",
        ],
    },
    Hint {
        id: "known-resource-refused",
        levels: [
            "Your function said the resource does not exist, but it does. Which name did it look up, and in which table?",
            "The resource to read and write is the one passed in, exactly as given.",
            "Pass `resource` unchanged to the lab's reads and writes.",
        ],
    },
    Hint {
        id: "stale-replayed",
        levels: [
            "The request came with a generation that is not the installed one, and your apply answered it as a replay (see `got`). Which does your apply look at first: the generation or the record?",
            "A worker whose authority is gone must learn nothing, not even an old result; and the generation says who may act, whatever was recorded.",
            "Compare the presented generation with the installed one first; look the record up only once they are equal.",
        ],
    },
    Hint {
        id: "stale-compared-with-record",
        levels: [
            "The request came with a generation that is not the installed one, and your apply called it a conflict with another request (see `got`). In which order does your apply check the generation and the record?",
            "The generation decides whether this worker may ask at all; only then does the record say what happened to its request.",
            "Compare the presented generation with the installed one first; look the record up only once they are equal.",
        ],
    },
    Hint {
        id: "stale-or-never-issued",
        levels: [
            "Your apply refused the generation, with the other reason. Is the presented generation lower or higher than the installed one?",
            "Lower: the worker's authority was taken away (`Stale`). Higher: nobody has installed that generation (`NeverIssued`).",
            "`match presented.cmp(&installed)`: `Less` is `Stale`, `Greater` is `NeverIssued`, `Equal` goes on.",
        ],
    },
    Hint {
        id: "generation-accepted",
        levels: [
            "Your apply accepted a generation that is not the installed one. What did it compare the presented generation with, and when was that read?",
            "Only the destination knows which generation is installed at the moment of the write. Lower and higher are both refused, for different reasons.",
            "Inside the transaction that writes: read `tx.installed_generation(resource)?`; lower is `Stale`, higher is `NeverIssued`, and only the exact match goes on.",
        ],
    },
    Hint {
        id: "current-refused",
        levels: [
            "Your apply refused the generation that is installed now. Which generation did it compare with, of which resource, read when?",
            "The installed generation of this resource, read inside the transaction that writes, is the only one to compare with; the same number is accepted.",
            "Read `tx.installed_generation(resource)?` after BEGIN and accept `presented == installed`.",
        ],
    },
    Hint {
        id: "new-request-replayed",
        levels: [
            "A request that was never applied was answered as a replay. Which record did your apply find, and by what key did it look?",
            "A request is the resource and its request id, the id byte for byte as the worker sent it. The generation and the delta are not part of the key.",
            "`tx.find_record(resource, request_id)` with the id unchanged (no trim, no lowercase, no truncation), and the record stored under the same pair.",
        ],
    },
    Hint {
        id: "new-request-conflict",
        levels: [
            "A request that was never applied was called a conflict with another. Which record did your apply find, and by what key did it look?",
            "A request is the resource and its request id, the id byte for byte as the worker sent it.",
            "Look the record up by `(resource, request_id)` exactly as given; a conflict needs a record of the same pair.",
        ],
    },
    Hint {
        id: "wrong-result",
        levels: [
            "Your apply applied, but returned another result. What does your result hold: the value before the delta, after it, or something else?",
            "The result is the resource's value after this request's delta, computed from the value stored now.",
            "`let result = value.checked_add(delta)...;` write it, record it, and return `Outcome::Applied { result }`.",
        ],
    },
    Hint {
        id: "replay-applied-again",
        levels: [
            "A request that was applied before was applied again. Did your apply find the first one's record, and did it look before it wrote?",
            "Every applied request leaves a record, keyed by resource and request id, in the transaction that writes its value; a later copy finds it and changes nothing.",
            "After the generation check: `if let Some(record) = tx.find_record(resource, request_id)?` return the replay, before any write.",
        ],
    },
    Hint {
        id: "replay-wrong-result",
        levels: [
            "The copy was answered as a replay, with another result than the first apply returned. Where does your replay's result come from?",
            "Other requests may have moved the value since; the answer to a copy is the answer the first apply gave.",
            "Return `Outcome::Replayed { result: record.result }`, the result stored with the record, not the current value.",
        ],
    },
    Hint {
        id: "replay-conflict",
        levels: [
            "A copy with the same delta was called a conflict. What does your apply compare between the record and the copy?",
            "Only the delta tells a copy from a different intent under a reused id.",
            "`Conflict` only when `record.delta != delta`; otherwise the replay.",
        ],
    },
    Hint {
        id: "conflict-replayed",
        levels: [
            "The same request id came with another delta, and your apply answered it as a replay. What does it compare before answering from the record?",
            "Same id and another delta is not a copy: the caller reused an id for a different intent.",
            "Before returning the replay: `if record.delta != delta { return Err(LabError::Conflict { .. }) }`.",
        ],
    },
    Hint {
        id: "conflict-applied",
        levels: [
            "The same request id came with another delta, and your apply applied it as new. Did it find the first request's record?",
            "Every applied request leaves a record keyed by resource and request id; a later request with the same pair finds it.",
            "Look the record up by `(resource, request_id)`; found with another delta is `Conflict`.",
        ],
    },
    Hint {
        id: "install-not-higher",
        levels: [
            "install_generation accepted a generation that is not higher than the installed one. What does it compare, and is equal allowed?",
            "A generation is issued once: every new holder gets a strictly higher number, or two holders could act with the same one.",
            "Inside the transaction: `if new_generation <= installed { return Err(LabError::NotHigher { .. }) }`.",
        ],
    },
    Hint {
        id: "install-refused",
        levels: [
            "install_generation refused a generation higher than the installed one. Which generation did it compare with: this resource's, read now?",
            "Only a generation that is not higher than this resource's installed one is refused.",
            "Read `tx.installed_generation(resource)?` in the transaction, refuse `new_generation <= installed`, write otherwise.",
        ],
    },
    Hint {
        id: "generation-differs",
        levels: [
            "The observer reads another installed generation than the claim expects. Which of your calls changed it, or failed to?",
            "Only install_generation writes a generation: of the resource it was given, when it accepts, and only if its transaction commits.",
            "One transaction: read this resource's generation, refuse `NotHigher`, write the new one with `tx.set_generation`, commit.",
        ],
    },
    Hint {
        id: "value-differs",
        levels: [
            "The observer reads another value than the claim expects. Which of the calls before this step should have changed it, and which did?",
            "A call that is refused, fails or replays changes nothing. A write made before a check that refuses, or outside the transaction that commits, survives.",
            "Make every check before the first write, and write the value and the record in the one transaction you commit at the end.",
        ],
    },
    Hint {
        id: "record-missing",
        levels: [
            "The observer misses a record that a request applied in this test should have left (see `expected`). Which call should have stored it, was it committed with the value, and did a later call remove it?",
            "The record is what makes a later copy a replay: it must be stored exactly when the value is.",
            "`tx.insert_record(...)` in the same transaction as `tx.set_value(...)`, before `tx.commit()`.",
        ],
    },
    Hint {
        id: "record-on-refusal",
        levels: [
            "A record is stored for a request that should have left none (the one in `got` that `expected` lacks). At which point does your apply store it, and in which transaction?",
            "A call that is refused or fails stores nothing: a record of it would turn a later copy into a replay of something that never happened.",
            "Insert the record only after every check passed, in the transaction that writes the value.",
        ],
    },
    Hint {
        id: "record-differs",
        levels: [
            "The right requests are recorded, but a record holds other contents (compare `expected` and `got` field by field). Which call wrote that record, and did a later call write it again?",
            "A request's record is written once, by the call that applies it, with the delta, the result it returned and the generation presented; copies only read it.",
            "Insert the record once, on the applied path, with `result` and `generation` of that call; never update it on a replay.",
        ],
    },
    Hint {
        id: "records-differ",
        levels: [
            "Other requests are recorded than the ones applied. Which record is missing or extra, and under what key was it stored?",
            "One record per applied request, keyed by the resource and the request id exactly as sent.",
            "Store `(resource, request_id)` unchanged, in the transaction that applies the delta, and nothing on other paths.",
        ],
    },
    Hint {
        id: "lock-taken-after-the-read",
        levels: [
            "Another install got in while your call was paused after a read (see the step), and your call then met contention, though that install had committed by then. What lock did your transaction hold when it read, and when did it ask for the lock it needed to write?",
            "A transaction that reads before it holds the write lock can be overtaken: once another writer commits, it cannot take the lock on what it read (SQLite in WAL mode answers busy). Nothing wrong was written, but the request failed where it could have been decided.",
            "Take the lock before the read: begin with `db.begin(TransactionBehavior::Immediate)`, then read the generation and decide.",
        ],
    },
    Hint {
        id: "fault-relabelled",
        levels: [
            "The test injected a fault into one of your call's statements (see `expected`), and your call answered something else (see `got`). Where does your code turn an error it did not expect into another answer?",
            "A fault in the middle of a call is the database's answer, not the contract's. Passed on, it tells the caller to retry; turned into contention, a refusal or a success, it tells the caller something that did not happen.",
            "Let every error you do not handle on purpose through unchanged with `?`, and build a `LabError` of your own only for the contract's refusals.",
        ],
    },
    Hint {
        id: "other-numbers",
        levels: [
            "Your call gave the kind of answer the step expected, with other numbers (compare `expected` and `got`). Where do the numbers in your answer come from, and when were they read?",
            "A refusal names what was presented and what is installed; a result is the value after the delta, or the first apply's result on a replay. Each number comes from what the call read in its own transaction, or from its arguments.",
            "Fill each field of the answer from this call: the presented generation from the argument, the installed one from the resource's row read under the lock, the result from the value written or the record found.",
        ],
    },
    Hint {
        id: "answer-differs",
        levels: [
            "Your call answered what `got` shows where the step expected what `expected` shows. Which decision in your code leads to that answer, and what had it read when it made it?",
            "Run the claim's tests alone (the `alone:` command) and follow the step: compare each decision your function makes with the claim's statement, in order.",
            "Make the decision the claim states, in the transaction that writes, from what that transaction read.",
        ],
    },
    Hint {
        id: "lost-update",
        levels: [
            "Both requests were answered applied, yet the value did not move by both deltas (see `got`): one effect was lost. From which value did the paused request compute what it wrote, and when had it read that value?",
            "Two requests that read the same value, each without a lock that keeps the other out, each write their own sum: the later write erases the earlier effect.",
            "Read the value only once your transaction holds the lock that keeps other writers out (the write lock on SQLite, the row's lock on PostgreSQL), or let the UPDATE add the delta itself.",
        ],
    },
    Hint {
        id: "lock-not-held",
        levels: [
            "While your call was paused between its read and its write, another connection got in (see `got`). When does your transaction take the lock that keeps others out: before its read, at its first write, or not at all?",
            "A lock taken only at the first write leaves a window after the read in which an install can land: the decision is then made on a generation that is no longer installed.",
            "Begin with `db.begin(TransactionBehavior::Immediate)`, before reading the generation, and keep the transaction until the commit.",
        ],
    },
    Hint {
        id: "etcd-token-not-installed",
        levels: [
            "Your worker's job was refused as never issued: it presented a token the destination had not installed (see `got`). What does your worker do with its token before it calls apply?",
            "The destination accepts only the generation installed now: a holder installs its token with install_generation, then presents that same token.",
            "`install_generation(held.revision)` first; then `apply` with `held.revision`; stop with `Superseded` if the install finds a higher generation.",
        ],
    },
    Hint {
        id: "etcd-acted-without-authority",
        levels: [
            "A worker that no longer held the authority got its write through (see `got`). Which token did it present, and was it the one it installed when it took the lock?",
            "A generation read from the destination belongs to whoever installed it last; only the token your worker installed tells it from the newer holder. A lock that was never granted, or a newer generation found at the install, means: stop.",
            "Present `held.revision`, the token you installed; never a generation you read or adopt; return without calling apply when the lock fails or the install finds a newer generation.",
        ],
    },
    Hint {
        id: "etcd-token-not-rising",
        levels: [
            "The generation installed after your worker took the lock is still the first one (see `got`). What token did your worker install, and does it rise with every new holder, in every process?",
            "A token must come from the coordinator, raised for every new holder of the lock and kept across a new leader; a counter of the worker's own starts again in each process.",
            "Install and present the lock key's revision, `held.revision`.",
        ],
    },
    Hint {
        id: "etcd-request-id",
        levels: [
            "The same job was recorded (or applied) as another request (see `got`). Which request id does your worker present, and is it the same on every attempt?",
            "The request id names the request, not the attempt, the process or the token: a retry must present it unchanged to be answered from the record.",
            "Pass the job's request id to apply exactly as the job gives it.",
        ],
    },
    Hint {
        id: "read-without-lock",
        levels: [
            "While install_generation was paused inside its write, your apply read the generation anyway (see `got`). What did your apply wait for before it read?",
            "A read that takes no lock sees the generation an install is about to replace; acting on it is acting on a decision already old.",
            "Take the lock (BEGIN IMMEDIATE, the row lock) before reading the generation, so that the read waits for the install, or meets contention.",
        ],
    },
    Hint {
        id: "lock-too-wide",
        levels: [
            "While your call was paused, another connection was kept out of something your call does not touch (see `got`). What does your transaction lock?",
            "A lock covers what the database locks: a row lock covers its row, a lock on another row or on the whole table holds back work that does not conflict.",
            "Lock the row of the resource you change, and only that row: `tx.lock_row(resource)`.",
        ],
    },
    Hint {
        id: "checkpoint-not-reached",
        levels: [
            "The test meant to pause your call where it reads the generation (or writes), but the call returned without getting there. Does it read the installed generation, inside its transaction?",
            "The test pauses a call where the database sees it read the generation or write the value; a call that returns earlier was decided on something else.",
            "Read the generation with `tx.installed_generation(resource)` inside the transaction, then write.",
        ],
    },
];

/// Answers that read otherwise on PostgreSQL, where the lock is the row's.
/// The hints that name the lab's Rust API, as the SQL functions' track
/// (`exercises/postgres/contract.sql`) asks them: a new question where the
/// question names Rust (`None` keeps it), then where to look, then the
/// answer. `None` keeps the level as it is.
pub(super) const SQL_HINTS: &[(&str, [Option<&str>; 3])] = &[
    (
        "not-implemented",
        [
            Some(
                "This step reached a function whose body still calls `fencing_lab_todo`. Which function does `got` name, and what must it return for this step?",
            ),
            Some(
                "Read the claim's statement and the comments of exercises/postgres/contract.sql; they name the helpers each refusal raises.",
            ),
            Some(
                "Replace the `PERFORM fencing_lab_todo(...)` line with the function's body: lock the row, read, decide, write, in that order.",
            ),
        ],
    ),
    (
        "panicked",
        [
            Some(
                "The adapter could not read your function's answer. What did it return or raise (see `got`)?",
            ),
            Some(
                "apply returns `outcome` ('applied' or 'replayed') and `value_after`; a refusal is raised by its refuse_… helper, which puts the numbers in DETAIL.",
            ),
            Some(
                "Set both OUT parameters before every RETURN, and raise refusals only through the refuse_… helpers.",
            ),
        ],
    ),
    (
        "database-error",
        [
            None,
            Some(
                "Read the error in `got`: PostgreSQL names the statement's problem (a missing privilege, a column, a type).",
            ),
            Some(
                "Inside the function, name parameters apart from columns (`p_resource`, not `resource`), and qualify where both could be meant.",
            ),
        ],
    ),
    (
        "contention-answered",
        [
            None,
            Some(
                "A row another session holds must fail at once: `FOR UPDATE NOWAIT` raises SQLSTATE 55P03, which the lab counts as contention, not a verdict.",
            ),
            Some(
                "Take the row with `SELECT ... FOR UPDATE NOWAIT` first, and let its error go out of the function; do not catch it and answer.",
            ),
        ],
    ),
    (
        "overflow",
        [
            Some(
                "The new value does not fit in a bigint. What does your function do when the value plus the delta is out of range?",
            ),
            Some(
                "A bigint sum out of range raises SQLSTATE 22003, which is not an answer of the contract.",
            ),
            Some(
                "Check the sum against the bigint bounds first, or catch `numeric_value_out_of_range` around it, and raise `refuse_overflow(value, delta)`.",
            ),
        ],
    ),
    (
        "unknown-resource",
        [
            None,
            Some(
                "A `SELECT ... INTO` that finds no row leaves `FOUND` false and its variables NULL.",
            ),
            Some(
                "Right after reading the row: `IF NOT FOUND THEN PERFORM refuse_unknown_resource(p_resource); END IF;`",
            ),
        ],
    ),
    (
        "generation-accepted",
        [
            None,
            None,
            Some(
                "Read the installed generation of the locked row, then `refuse_stale` when the presented one is lower and `refuse_never_issued` when it is higher.",
            ),
        ],
    ),
    (
        "current-refused",
        [
            None,
            None,
            Some(
                "Compare `p_generation` with the generation of the row named `p_resource`, read after `FOR UPDATE NOWAIT`; equal is accepted.",
            ),
        ],
    ),
    (
        "new-request-replayed",
        [
            None,
            None,
            Some(
                "Look the record up `WHERE resource = p_resource AND request_id = p_request_id`, nothing more.",
            ),
        ],
    ),
    (
        "replay-applied-again",
        [
            None,
            None,
            Some(
                "After the generation check, look the record up; if `FOUND`, return 'replayed' with its result (or refuse a conflict) before any write.",
            ),
        ],
    ),
    (
        "install-refused",
        [
            None,
            None,
            Some(
                "Read this resource's generation `FOR UPDATE NOWAIT` and refuse with `refuse_not_higher` only when `p_new_generation <= installed`.",
            ),
        ],
    ),
    (
        "generation-differs",
        [
            None,
            None,
            Some(
                "Only install_generation's `UPDATE resources SET generation = ...` writes it, after every check has passed.",
            ),
        ],
    ),
    (
        "record-missing",
        [
            None,
            None,
            Some(
                "After the value's UPDATE, INSERT the record in the same function call: one statement, one transaction.",
            ),
        ],
    ),
    (
        "duplicate-insert",
        [
            None,
            None,
            Some(
                "Take the row lock before you look the record up: a second copy then meets contention, retries, and finds the record.",
            ),
        ],
    ),
    (
        "lock-not-held",
        [
            None,
            None,
            Some(
                "Start with `SELECT ... FOR UPDATE NOWAIT` on the resource's row and decide on what it returns.",
            ),
        ],
    ),
    (
        "lost-update",
        [
            None,
            None,
            Some(
                "Read the value with `SELECT ... FOR UPDATE NOWAIT` on the resource's row, or let the UPDATE add the delta itself (`SET value = value + p_delta`).",
            ),
        ],
    ),
    (
        "checkpoint-not-reached",
        [
            None,
            None,
            Some(
                "Write the value with `UPDATE resources SET value = ...` and the record with an INSERT into requests: the test pauses at those writes.",
            ),
        ],
    ),
];

pub(super) const POSTGRES_ANSWERS: &[(&str, &str)] = &[
    (
        "lock-taken-after-the-read",
        "Lock the resource's row before you read its generation (`tx.lock_row(resource)`, or `SELECT ... FOR UPDATE`), then decide.",
    ),
    (
        "lock-not-held",
        "Lock the resource's row before you read its generation (`tx.lock_row(resource)`, or `SELECT ... FOR UPDATE`), and keep the transaction until the commit.",
    ),
    (
        "duplicate-insert",
        "Take the row lock first (`tx.lock_row(resource)`), then look the record up in the same transaction: a second copy waits at the lock, meets contention, retries, and finds the record.",
    ),
    (
        "contention-answered",
        "Let `Contention` (SQLSTATE 55P03, a row lock held elsewhere) through unchanged with `?`; never turn it into a refusal or a success.",
    ),
];

pub(super) const CLAIMS: &[ClaimHint] = &[
    (
        "L1.1",
        [
            "The worker comes back with the generation it read before the authority moved on. What does your apply compare that generation with?",
            "Only the destination knows what is installed now; what the worker read earlier may be stale.",
            "apply compares the presented generation with the one installed now, read in its transaction; install_generation must really write the new one.",
        ],
        None,
    ),
    (
        "L1.2",
        [
            "No pause is needed here: an install lands between the worker's own check and its write. Which check in this story can still catch it?",
            "A check made before the write, by the worker, is already old when the write happens.",
            "apply checks the generation itself, in the transaction that writes.",
        ],
        None,
    ),
    (
        "L1.3",
        [
            "One interleaving breaks an invariant (see `got`). At which point of that schedule did your code decide on something another actor had changed?",
            "Each step of the schedule is one statement; an invariant breaks when a read and the write that depends on it are not protected from the steps in between.",
            "Take the write lock before reading the generation and keep it until the commit; record each request with its result and generation in the same transaction.",
        ],
        None,
    ),
    (
        "L1.4",
        [
            "The stale worker is another process on another connection. What does your apply compare its generation with, read when?",
            "The destination decides, whoever connects: the generation read under the row lock is the only one that counts.",
            "Lock the row, read its generation, and compare the presented generation with it, all in one transaction.",
        ],
        None,
    ),
    (
        "L2.1",
        [
            "Two resources, one new generation. Which resource's generation did your code read or write?",
            "Every read and write of a generation names the resource passed in.",
            "Read and write the generation of the resource you were given, and only that one.",
        ],
        None,
    ),
    (
        "L2.2",
        [
            "The worker presents a generation higher than the installed one. What does your apply answer, and which comparison decided it?",
            "Higher than installed means nobody issued it; lower means it was taken away. Only equality is authority.",
            "Accept only equality: higher is `NeverIssued`, lower is `Stale`.",
        ],
        None,
    ),
    (
        "L2.3",
        [
            "The current holder applies. What does your apply return, and is it committed?",
            "Success returns the value after the delta, and only a committed transaction keeps it.",
            "On success return `Outcome::Applied { result }` with the value after the delta, and commit.",
        ],
        None,
    ),
    (
        "L2.4",
        [
            "The authority asks for a generation that is not higher. What does your install_generation do with an equal or lower one?",
            "A generation is issued once; an equal or lower one would give two holders the same authority.",
            "Refuse `new_generation <= installed` with `NotHigher`, and change nothing.",
        ],
        None,
    ),
    (
        "L2.5",
        [
            "The resource does not exist. What does your function return, and did it create anything?",
            "The lab's reads report a missing resource as `UnknownResource`.",
            "Let the `UnknownResource` error from `installed_generation` through with `?`; never insert a resource.",
        ],
        None,
    ),
    (
        "L2.6",
        [
            "Generation 2 was granted but not yet installed. What does your apply know about it?",
            "The destination knows only what is installed; a promise made elsewhere does not reach it.",
            "A presented generation higher than the installed one is `NeverIssued`, whoever promised it.",
        ],
        None,
    ),
    (
        "L2.7",
        [
            "A random sequence (already shrunk to its shortest) ends in a step where your code and the model differ. Replay it by hand: what does the contract say at that step?",
            "The model is the contract and nothing else: validate, check the generation, look the record up, add without overflow, record, commit.",
            "Follow the failing sequence against that order; the first step where your code answers differently is the decision to fix.",
        ],
        None,
    ),
    (
        "L3.1",
        [
            "Another connection holds the write lock. What does your apply return while it does, and afterwards?",
            "Contention is not a verdict: the caller retries it.",
            "Pass `LabError::Contention` through unchanged; do not turn it into a generation error.",
        ],
        Some([
            "Another session holds the row lock. What does your apply return while it does, and afterwards?",
            "A row lock held elsewhere is contention (SQLSTATE 55P03), not a verdict: the caller retries it.",
            "Pass `LabError::Contention` through unchanged.",
        ]),
    ),
    (
        "L3.2",
        [
            "While your apply sits between its read of the generation and its write, can an install get in?",
            "An install between the check and the effect makes the decision stale before it is applied.",
            "Take the write lock before reading the generation (BEGIN IMMEDIATE) and keep it until the commit.",
        ],
        Some([
            "While your apply sits between its read of the generation and its write, can an install get in?",
            "An install between the check and the effect makes the decision stale before it is applied.",
            "Lock the row (`tx.lock_row`, or an advisory lock per resource that install_generation takes too) before reading the generation, and keep it until the commit.",
        ]),
    ),
    (
        "L3.3",
        [
            "install_generation also reads, then writes. While it sits between the two, can another writer get in?",
            "The same window as apply's: a read that takes no lock.",
            "BEGIN IMMEDIATE before the read.",
        ],
        Some([
            "install_generation also reads, then writes. While it sits between the two, can another writer get in?",
            "The same window as apply's: a read that takes no lock.",
            "`tx.lock_row` before the read.",
        ]),
    ),
    (
        "L3.4",
        [
            "The claim holds in one journal mode and not in the other. Which lock does your transaction take, and when, in each?",
            "In WAL mode readers do not block, so only the write lock protects a decision.",
            "BEGIN IMMEDIATE takes the write lock in both modes; a DEFERRED transaction holds none until its first write.",
        ],
        None,
    ),
    (
        "L3.5",
        [
            "A real sqlite3 shell holds BEGIN IMMEDIATE. What does your apply answer while it does?",
            "Another process's write lock is contention, not a verdict.",
            "BEGIN IMMEDIATE before reading the generation, and pass `Contention` through unchanged.",
        ],
        None,
    ),
    (
        "L3.6",
        [
            "Under load, with retries on contention, an invariant broke or contention was reported as a rejection. Which of your decisions was made outside the lock?",
            "Every Contention error is the caller's to retry; a refusal must come from the generation read inside the locked transaction.",
            "Let every `Contention` through unchanged, and refuse only on the generation read inside the IMMEDIATE transaction.",
        ],
        None,
    ),
    (
        "L3.7",
        [
            "An apply paused on fund-A: is fund-B still free for others?",
            "A lock covers what the database locks: a row lock covers one resource.",
            "Lock the row of the resource you change, and only that row: `tx.lock_row(resource)`.",
        ],
        None,
    ),
    (
        "L3.8",
        [
            "Two requests changed one value at once, and the answers or the value fit no order of the two (see the step). What did your paused call read that the other changed before it wrote?",
            "A value read where no lock keeps others out is history by the time it is written back: the other request's effect is lost, or the answers disagree with the value.",
            "Read the value in the transaction that writes it, after that transaction holds the lock (IMMEDIATE on SQLite, the row locked first on PostgreSQL), or write `value = value + delta` in one statement.",
        ],
        None,
    ),
    (
        "L4.1",
        [
            "The same intent arrives twice. What does your apply know about the first one when the second arrives?",
            "Only a stored record lets the destination tell a copy from a new request.",
            "Record every applied request and look it up by resource and request id before applying.",
        ],
        None,
    ),
    (
        "L4.2",
        [
            "The value moved since r1 was applied. What does a replay of r1 answer?",
            "A copy gets the answer the first apply gave, not the state of now.",
            "Return the result stored with the record.",
        ],
        None,
    ),
    (
        "L4.3",
        [
            "The same request id comes with another delta. What does your apply answer?",
            "Same id, another delta: a reused id for another intent.",
            "Compare the stored delta before answering with the stored result: different is `Conflict`.",
        ],
        None,
    ),
    (
        "L4.4",
        [
            "r1 on fund-A and r1 on fund-B: one request or two, for your apply?",
            "A request is identified within its resource.",
            "Look the record up by resource and request id.",
        ],
        None,
    ),
    (
        "L4.5",
        [
            "Two request ids under one generation. What identifies a request in your apply?",
            "The request id names the intent; the generation only says who may act.",
            "Key records by resource and request id, never by generation.",
        ],
        None,
    ),
    (
        "L4.6",
        [
            "A stale worker replays a request. What does it learn from your apply?",
            "A worker that lost its authority must not learn results through replays.",
            "Check the generation first, then the record.",
        ],
        None,
    ),
    (
        "L4.7",
        [
            "The same request comes again under a newer installed generation. One effect or two?",
            "The record says what happened to a request, whatever generation it came with.",
            "Key the record by resource and request id, not by generation.",
        ],
        None,
    ),
    (
        "L4.8",
        [
            "A request was refused or failed. What did your apply store?",
            "A record of a request that did not apply would turn a later copy into a replay of nothing.",
            "Write the record only on the success path, in the same transaction as the value.",
        ],
        None,
    ),
    (
        "L4.9",
        [
            "The worker's response was lost and it retries. What does your apply answer the retry, and what does it change?",
            "The retry is a copy of a request already applied, even if other requests moved the value since.",
            "Answer the retry from the record.",
        ],
        None,
    ),
    (
        "L4.10",
        [
            "The same request on two connections at once: at the interleaving in `got`, what did each copy see when it looked for the record?",
            "A lookup made before the write lock lets a duplicate in between, and its insert then fails on the record's key.",
            "Look the record up inside the transaction that writes it, after BEGIN IMMEDIATE.",
        ],
        Some([
            "The same request on two sessions at once: what did each copy see when it looked for the record?",
            "A lookup made before the row lock lets a duplicate in between, and its insert then fails on the record's key.",
            "Lock the resource's row first (`tx.lock_row`), then look the record up in the same transaction.",
        ]),
    ),
    (
        "L4.11",
        [
            "Two ids that differ (case, whitespace, one byte): one request or two, for your apply?",
            "The request id is opaque: the destination compares it byte for byte.",
            "Store and look up the request id exactly as it was sent: no trim, lowercase, normalization or truncation.",
        ],
        None,
    ),
    (
        "L5.1",
        [
            "A fault strikes between the value and the record. What survives of your apply's writes?",
            "A rollback undoes what one transaction wrote, and only that.",
            "Write the value and the record in one transaction, committed once at the end.",
        ],
        None,
    ),
    (
        "L5.2",
        [
            "The external call is not undone by the rollback: that is the limit this claim shows. Did your value or record survive the fault too?",
            "The ledger keeping the call is not a bug to fix; a value or record that survived the fault is.",
            "Write the value and the record in one transaction, so that the fault rolls both back.",
        ],
        None,
    ),
    (
        "L5.3",
        [
            "A direct SQL write goes around apply: that is the limit this claim shows. What did your own functions leave in the lab before it?",
            "The contract covers only writes that go through apply; the test's setup still uses your functions.",
            "Make the earlier steps (install, apply) behave as the contract says; the bypass itself is not yours to stop.",
        ],
        None,
    ),
    (
        "L5.4",
        [
            "An old generation is restored: that is the limit this claim shows. What did your functions do before and after the restore?",
            "apply trusts the installed generation, whatever put it there.",
            "Compare the presented generation with the one installed now, whatever wrote it.",
        ],
        None,
    ),
    (
        "L5.5",
        [
            "Every connection closed and opened again. What was committed before?",
            "What is not committed is gone when the connection closes.",
            "Commit the transaction before returning.",
        ],
        None,
    ),
    (
        "L5.6",
        [
            "A process killed between the value and the record: what did the file keep of your apply's writes?",
            "SQLite discards an uncommitted transaction when the process dies, and only that.",
            "Write the value and the record in one transaction and commit once, at the end.",
        ],
        None,
    ),
    (
        "L5.7",
        [
            "The sqlite3 shell's direct UPDATE goes around the contract: that is the limit shown. What did your functions leave in the lab before it?",
            "The contract covers only writes that go through apply, whoever else opens the file.",
            "Make the earlier steps behave as the contract says; the bypass itself is not yours to stop.",
        ],
        None,
    ),
    (
        "L6.1",
        [
            "This input is malformed. Where does your function check it, and what had it changed by then?",
            "Refuse malformed input before the transaction; an overflow is found with the value and refused before any write.",
            "Check the request id and the generation before BEGIN; use `checked_add` for the value.",
        ],
        None,
    ),
    (
        "L7.1",
        [
            "A worker was frozen while a newer holder took the lock and wrote. Which token does your worker present, and where does it get it?",
            "A token etcd raises for every new holder is what lets the destination tell the woken worker from the new one.",
            "Act with the token you installed, taken from the lock key's revision (`Held::revision`).",
        ],
        None,
    ),
    (
        "L7.2",
        [
            "Your worker held the lock, was frozen, and woke. What does holding the lock prove at that moment?",
            "Nothing, once you have been frozen: only a token the destination checks tells old from new.",
            "Install your token before acting and present that token to apply, never a generation you happen to read.",
        ],
        None,
    ),
    (
        "L7.3",
        [
            "The leader was killed between two holders. Is the next holder's token higher than yours, whoever leads now?",
            "A value the cluster replicates before it grants the lock survives a new leader; one kept by a process does not.",
            "Present the token you installed, taken from the lock key's revision.",
        ],
        None,
    ),
    (
        "L7.4",
        [
            "Your worker could not show that it holds the newest authority (a newer generation was installed, or its lease was lost before the lock was granted). What did it do next?",
            "A `NotHigher` install with a higher installed generation, or a lock that was never granted, both mean someone else may hold the authority: a worker in that position must not act.",
            "Return without calling apply: `LabError::Superseded` when a newer generation is installed, the error you got when the lock failed; never borrow the installed generation.",
        ],
        None,
    ),
    (
        "L7.5",
        [
            "The worker was killed after its commit and the request is retried in a new process. What request id does the retry present?",
            "The id names the request, not the attempt or the token.",
            "Take the lock again and present the same request id, unchanged.",
        ],
        None,
    ),
    (
        "L7.6",
        [
            "One worker took its lease first but the lock second. Which number orders the holders in your worker?",
            "The lease id follows the order leases were granted in; a counter of your own starts again in every process.",
            "Use the lock key's revision (`Held::revision`).",
        ],
        None,
    ),
    (
        "L8.1",
        [
            "The worker's own UPDATE of the table went through (see `got`). Which rights does the worker's role have on the tables, and who runs apply's body?",
            "A function marked SECURITY DEFINER runs with its owner's rights: the caller needs no right on the tables at all.",
            "Keep apply SECURITY DEFINER and grant the worker EXECUTE on it, never SELECT, UPDATE or INSERT on the tables.",
        ],
        None,
    ),
    (
        "L8.2",
        [
            "A worker called install_generation and it ran. Who may call a function that nobody granted anything on?",
            "A new function is executable by PUBLIC, every role, until that right is taken back.",
            "`REVOKE EXECUTE ON FUNCTION install_generation(text, bigint) FROM PUBLIC;` then `GRANT EXECUTE ... TO fencing_authority;` (and the same for apply and fencing_worker).",
        ],
        None,
    ),
    (
        "L8.3",
        [
            "The owner's UPDATE wrote an old generation back. What in your file runs when anyone, not only install_generation, writes a generation?",
            "install_generation's check sees only its own callers; a rule of the schema (a trigger on the table) sees every UPDATE.",
            "Add a BEFORE UPDATE OF generation trigger on resources that raises (refuse_not_higher) when NEW.generation < OLD.generation.",
        ],
        None,
    ),
    (
        "L8.4",
        [
            "This claim shows what stays open; which step of it did your functions change (see `got`)?",
            "The owner lifts the rules and writes; then apply runs with a fault between its writes. Your functions must still judge and write as in L2 and L5.",
            "Nothing to close here: make apply refuse the stale call and write value then record, as the earlier claims ask.",
        ],
        None,
    ),
    (
        "L8.5",
        [
            "Without the worker's temporary relations your apply refused this stale request; with them in place it did not (see `got`). Which relation named resources does your apply's body read, and whose search_path picks it?",
            "An unqualified table name is looked up in the search_path in force when the statement runs. A function without a search_path of its own runs in its caller's, where the caller's temporary schema (pg_temp) comes first unless it is named later; SECURITY DEFINER then lets the caller's view read and write with the owner's rights.",
            "Give each SECURITY DEFINER function a search_path of its own: `SET search_path FROM CURRENT` (the file is loaded with the lab's schema first and pg_temp last), or one that names pg_temp last.",
        ],
        None,
    ),
    (
        "L8.6",
        [
            "One of the authority's steps came out otherwise than its part allows (see the step and `got`). Which rights does fencing_authority hold, granted to it or to every role (PUBLIC)?",
            "The authority's part is install_generation and nothing else. Calling apply is the worker's part, and install_generation writes the tables with its owner's rights (SECURITY DEFINER), so the authority needs no right on resources or requests.",
            "Grant fencing_authority EXECUTE on install_generation only: no EXECUTE on apply, no SELECT, INSERT, UPDATE or DELETE on resources or requests (and revoke PUBLIC's EXECUTE on both functions).",
        ],
        None,
    ),
];
