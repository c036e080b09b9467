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
            "A record's key is the resource and the request id, so a second insert of the same pair fails. A call inserts it a second time when it did not look for it, looked under another key, or looked before another copy of the request stored it.",
            "A call inserts a record only once it knows, in the transaction that inserts, that none is stored for that pair. Did your apply look for this pair, in that transaction, after it held the write lock?",
        ],
    },
    Hint {
        id: "database-error",
        levels: [
            "Your function returned a database error instead of an answer of the contract. Which of its statements failed, and what did that statement expect to find?",
            "Read the error in `got`: it names the statement's problem. The lab's `Tx` methods cover every statement the exercise needs.",
            "A call answers every case the contract defines with its own `LabError` or `Outcome`; a statement that fails is a mistake in the statement. Was yours built with a value joined into its text (an id with a quote then breaks it; `?1` parameters never do), or did it expect a table, a column or a row that is not there?",
        ],
    },
    Hint {
        id: "decided-in-another-transaction",
        levels: [
            "Your call paused between two of its own transactions, where it held no lock, and another actor acted there (see the step). Did a transaction act on something only the first one had read, or answer from a state the other actor had moved since?",
            "A commit releases every lock, and what a transaction read is history once it ends. What the second transaction writes or answers follows from what it reads itself, under its own lock, and from nothing the first one saw.",
            "A call's check, its effect and its answer follow from one state, held under one lock. Which of your call's decisions or answers came from a transaction other than the one that wrote its effect?",
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
        id: "id-too-long-not-refused",
        levels: [
            "This request id is longer than the contract allows (see `expected`), and the answer was another. The `requests` table refuses such an id whatever statement stores it: what became of the id, or of that refusal, on its way through your code?",
            "An id is data, kept byte for byte: one cut, trimmed or otherwise changed to fit is another request's id. Past `MAX_REQUEST_ID_BYTES` the statement that records the request fails, and that failure reaches your code as `RequestIdTooLong`; the transaction it failed in must then leave nothing behind.",
            "The step shows the id was not refused as too long; the code either changed the id before it was stored, or answered the table's refusal with something else (or committed what came before it). Which one does your apply do? Passing the id through unchanged and the error back with `?` keeps the contract, and so does refusing it yourself at the top.",
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
            "The request came with a generation that is not the installed one, and your apply answered it as a replay (see `got`). Why did the generation not refuse it: which did your apply decide on first, the generation or the record?",
            "A stale or never-issued request is refused whatever is recorded: a worker whose authority is gone learns nothing, not even an old result. A replay's answer comes from a record, and only a request that applied leaves one.",
            "The generation refuses this request before any record can answer it. Did your apply read a record before it checked the generation, find a record an earlier call should not have stored (one of a refused request), or answer a replay without a record?",
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
            "The step presented the generation installed now, yet your refusal names another one as installed. Which resource's generation did your code read, and when: in the transaction that writes, or before?",
        ],
    },
    Hint {
        id: "refusal-numbers-agree",
        levels: [
            "Your apply refused the generation, yet the refusal's own numbers say the presented generation is the installed one (see `got`), the one case that goes on. What made your code refuse, and where do the two numbers in the refusal come from?",
            "A refusal by generation reports the two numbers it compared. When they are equal, it did not come from comparing them as the contract does: it came from a comparison that refuses equal, from other numbers than the ones it reports, or from another path that answers with a refusal (an error turned into one, say).",
            "Only a presented generation that differs from the installed one, read in the transaction that writes, is refused, and the refusal reports those two numbers. Which path of your code built this refusal, and what had it read or met there?",
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
            "A copy finds the first request's record, stored with its value, and is answered from it before any write. Was the first request's record stored under this resource and request id, and did your apply look for it before it wrote?",
        ],
    },
    Hint {
        id: "replay-wrong-result",
        levels: [
            "The copy was answered as a replay, with another result than the first apply returned. Where does your replay's result come from?",
            "Other requests may have moved the value since; the answer to a copy is the answer the first apply gave.",
            "The answer to a copy is the result its first apply returned, stored with the record when it applied and never written again. Does your replay answer from that record, and does any later call change the record or apply the copy again?",
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
            "install_generation refused a generation higher than the installed one. What did it compare with, and how: this resource's generation, read now, as a number?",
            "Only a generation that is not higher than this resource's installed one is refused.",
            "Read `tx.installed_generation(resource)?` in the transaction, refuse `new_generation <= installed`, write otherwise.",
        ],
    },
    Hint {
        id: "generation-differs",
        levels: [
            "The observer reads another installed generation than the claim expects. Which of your calls changed it, or failed to?",
            "Only install_generation writes a generation: of the resource it was given, when it accepts, and only if its transaction commits.",
            "A resource's generation changes only when install_generation accepts a higher one for that resource and commits. Which install wrote the generation the observer reads, or which accepted install did not commit it?",
        ],
    },
    Hint {
        id: "value-differs",
        levels: [
            "The observer reads another value than the claim expects. Which of the calls before this step should have changed it, and which did?",
            "A call that is refused, fails or replays changes nothing. A write made before a check that refuses, or outside the transaction that commits, survives.",
            "The value moves by the delta of each request that applied, once, and by nothing else. Which call's write is in the value that should not be, or missing from it, and did that call's transaction commit or roll back?",
        ],
    },
    Hint {
        id: "record-missing",
        levels: [
            "The observer misses a record that a request applied in this test should have left (see `expected`). Which call should have stored it, was it committed with the value, and did a later call remove it?",
            "The record is what makes a later copy a replay: it must be stored exactly when the value is.",
            "A request that applied leaves its record, written in the transaction that writes its value and committed with it. Did the call that applied this request insert the record, under which key, and did that insert commit?",
        ],
    },
    Hint {
        id: "record-on-refusal",
        levels: [
            "A record is stored for a request that should have left none (the one in `got` that `expected` lacks). At which point does your apply store it, and in which transaction?",
            "A call that is refused or fails stores nothing: a record of it would turn a later copy into a replay of something that never happened.",
            "A record is stored only for a request that applied, with its value, in one transaction. On which path did your apply store this one, and was that request applied?",
        ],
    },
    Hint {
        id: "record-differs",
        levels: [
            "The right requests are recorded, but a record holds other contents (compare `expected` and `got` field by field). Which call wrote that record, and did a later call write it again?",
            "A request's record is written once, by the call that applies it, with the delta, the result it returned and the generation presented; copies only read it.",
            "A request's record holds its delta, the result its first apply returned and the generation that apply presented, and no later call changes it. Which field differs here, and which call wrote it: the one that applied, or a later one?",
        ],
    },
    Hint {
        id: "records-differ",
        levels: [
            "Other requests are recorded than the ones applied. Which record is missing or extra, and under what key was it stored?",
            "One record per applied request, keyed by the resource and the request id exactly as sent.",
            "One record per applied request, under the resource and the request id exactly as sent, and none for a call that did not apply. Which recorded request was not applied, or which applied one is recorded under another key, and which call stored it?",
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
        id: "etcd-done-without-applying",
        levels: [
            "Your worker answered that its job was done, yet it never called apply (see `got`). Where did that answer come from?",
            "A worker's answer is what its caller acts on: done means the destination applied the request, or replayed its record. A job that stopped before apply was not done, whatever stopped it.",
            "Only the destination's answer says a job was done. On the path where your worker did not call apply, what did it return, and what would its caller believe?",
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
                "The statement named in `got` failed. Was it ambiguous (a parameter named like a column), built from a value joined into its text (`EXECUTE` with `||`, where `USING` passes values apart), or did it expect a row, a type or a privilege it did not have?",
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
                "The step presented the generation installed now, yet your refusal names another one as installed. Which row's generation did your function read, and was it the row named `p_resource`, read after `FOR UPDATE NOWAIT`?",
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
                "A copy finds the first request's record, stored with its value, and is answered from it before any write. Was the first request's record inserted under this resource and request id, and did your function look for it before its UPDATE?",
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
                "A resource's generation changes only when install_generation accepts a higher one for that resource and its `UPDATE resources SET generation = ...` commits. Which call wrote the generation the observer reads, or failed to?",
            ),
        ],
    ),
    (
        "record-missing",
        [
            None,
            None,
            Some(
                "A request that applied leaves its record, written in the same function call as its value and committed with it. Did your function insert this record, under which key, and did the insert commit?",
            ),
        ],
    ),
    (
        "duplicate-insert",
        [
            None,
            None,
            Some(
                "A call inserts a record only once it knows, in the same call, that none is stored for that pair. Did your function look for this pair after its `FOR UPDATE NOWAIT` on the resource's row?",
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
        "A call inserts a record only once it knows, in the transaction that inserts, that none is stored for that pair. Did your apply look for this pair, in that transaction, after it held the resource's row lock?",
    ),
    (
        "contention-answered",
        "Let `Contention` (SQLSTATE 55P03, a row lock held elsewhere) through unchanged with `?`; never turn it into a refusal or a success.",
    ),
];

/// Each claim's own hint, for a step whose observation says nothing more
/// specific. It speaks of the claim's principle and nothing else, at every
/// level: level 1 asks what the claim requires, level 2 says where in the
/// code that principle lives, level 3 states it plainly and asks; no level
/// names a fix that takes one particular mistake for granted.
pub(super) const CLAIMS: &[ClaimHint] = &[
    (
        "L1.1",
        [
            "The worker comes back with the generation it read before the authority moved on. What does your apply compare that generation with?",
            "apply's check of the generation: it compares the presented generation with the one installed at the destination, read in the transaction that writes. install_generation is what makes a new generation the installed one.",
            "Only the generation installed now gives authority; one read earlier may be stale. Which generation did your apply compare with, and had your install really written 2?",
        ],
        None,
    ),
    (
        "L1.2",
        [
            "No pause is needed here: an install lands between the worker's own check and its write. Which check in this story can still catch it?",
            "A check the worker makes before its write is already old when the write happens. The check that can still catch the install is apply's, in the transaction that writes.",
            "The destination judges the generation at the moment of the write, whatever the worker checked before. What does your apply compare, and in which transaction?",
        ],
        None,
    ),
    (
        "L1.3",
        [
            "One interleaving breaks an invariant (see `got`). Which invariant is it, and after which step of the schedule did your code's state stop keeping it?",
            "Each step of the schedule is one statement of one actor. Each invariant is kept by a decision of apply or install_generation and by the transaction that makes it and writes its effect.",
            "Every invariant holds after every step, whatever the other actors did in between. Which of your decisions, made in which transaction, let this one break at that step?",
        ],
        None,
    ),
    (
        "L1.4",
        [
            "The stale worker is another process on another connection. What does your apply compare its generation with, read when?",
            "The destination decides, whoever connects and from where: apply's check of the generation, in the transaction that writes, and what keeps an install out between that check and the write.",
            "Only the generation installed at the moment of the write gives authority, and no install lands between a check and its effect. Which generation did your apply compare with, and could an install land between that read and the write?",
        ],
        None,
    ),
    (
        "L2.1",
        [
            "Two resources, one new generation. Which resource's generation did your code read or write?",
            "Each resource has its own generation. Every read and every write of a generation, in install_generation and in apply, names one resource: the one passed in.",
            "An install on fund-A changes fund-A's generation and nothing else. Which of your reads or writes reached another resource?",
        ],
        None,
    ),
    (
        "L2.2",
        [
            "The worker presents a generation higher than the installed one. What does your apply answer, and which comparison decided it?",
            "apply's check of the generation, in the transaction that writes, has three outcomes: lower, equal and higher. Each has its own answer.",
            "Only the installed generation gives authority. Lower means it was taken away (`Stale`); higher means nobody installed it (`NeverIssued`). Which answer does your check give to a higher one?",
        ],
        None,
    ),
    (
        "L2.3",
        [
            "The current holder applies. What does your apply return, and is it committed?",
            "The path that accepts: the check lets the installed generation through, the value is written, and the transaction commits before apply returns.",
            "The installed generation is accepted, the result is the value after the delta, and it stays only once committed. Which of the three does `got` contradict?",
        ],
        None,
    ),
    (
        "L2.4",
        [
            "The authority asks for a generation that is not higher. What does your install_generation do with an equal or lower one?",
            "install_generation's check, in the transaction that writes the generation: it compares the new generation with the one installed now.",
            "A generation is issued once, so an equal or lower one is refused as `NotHigher`, and a refusal changes nothing. What does your install compare, and what had it written by the time it answered?",
        ],
        None,
    ),
    (
        "L2.5",
        [
            "The resource does not exist. What does your function return, and did it create anything?",
            "The first read of the resource, in install_generation and in apply: what it returns when no row is found, and what the code does next.",
            "A resource the lab does not know is refused as `UnknownResource`, and nothing is created for it. What does your code do when the resource's row is missing?",
        ],
        None,
    ),
    (
        "L2.6",
        [
            "Generation 2 was granted but not yet installed. What does your apply know about it?",
            "apply's check of the generation: the destination knows only what install_generation wrote, not what the authority promised elsewhere.",
            "A generation that is not installed has no authority yet, whoever granted it: a higher one is `NeverIssued` until it is installed. What does your apply compare the presented generation with?",
        ],
        None,
    ),
    (
        "L2.7",
        [
            "A random sequence (already shrunk to its shortest) ends in a step where your code and the model differ. Replay it by hand: what does the contract say at that step?",
            "The model is the contract and nothing else: it checks the input, then the generation, then the record, adds without overflow, records, and commits.",
            "At every step your code answers as the model does and leaves the state the model leaves. At the first step where they differ, which decision of the contract did your code make otherwise?",
        ],
        None,
    ),
    (
        "L3.1",
        [
            "Another connection holds the write lock. What does your apply return while it does, and afterwards?",
            "Where your apply begins its transaction and meets the lock: what it answers when the lock is held elsewhere, and what it had read by then.",
            "Contention is not a verdict: while the lock is held elsewhere, apply acts on nothing and answers contention, and the caller tries again; once the lock is free, it succeeds. What did your apply answer, or do, while it could not take the lock?",
        ],
        Some([
            "Another session holds the row lock. What does your apply return while it does, and afterwards?",
            "Where your apply locks the resource's row: a row lock held elsewhere is contention (SQLSTATE 55P03), and what the call read before it held the lock decides nothing.",
            "Contention is not a verdict: while the row lock is held elsewhere, apply acts on nothing and answers contention, and the caller tries again; once the lock is free, it succeeds. What did your apply answer, or do, while it could not take the lock?",
        ]),
    ),
    (
        "L3.2",
        [
            "While your apply sits between its read of the generation and its write, can an install get in?",
            "The transaction in which apply reads the generation and writes: what it holds between the read and the write.",
            "The check of the generation and its effect are one transaction, and no install lands between them: one tried in between meets contention. What keeps an install out of that window in your apply?",
        ],
        None,
    ),
    (
        "L3.3",
        [
            "install_generation also reads, then writes. While it sits between the two, can another writer get in?",
            "install_generation's transaction: what it holds between its read of the generation and its write.",
            "install_generation's read and its write are one decision: no install or apply lands between them, and one tried there meets contention. What keeps other writers out of that window in your install_generation?",
        ],
        None,
    ),
    (
        "L3.4",
        [
            "The claim holds in one journal mode and not in the other. Which lock does your transaction take, and when, in each?",
            "How your transactions begin. In WAL mode readers do not block writers, so only the write lock, held from the read to the commit, protects a decision.",
            "A decision is protected from the moment its transaction holds the write lock, in either mode, and not before. When does your transaction take the write lock, and does that depend on the mode?",
        ],
        None,
    ),
    (
        "L3.5",
        [
            "A real sqlite3 shell holds BEGIN IMMEDIATE. What does your apply answer while it does?",
            "Where your apply begins its transaction and meets another process's write lock, and what it answers there.",
            "Another process's write lock is contention, not a verdict: apply answers contention while the shell holds it, and succeeds once the shell commits. What did your apply answer while the shell held the lock, and after?",
        ],
        None,
    ),
    (
        "L3.6",
        [
            "Under load, with retries on contention, an invariant broke or contention was reported as a rejection. Which one does `got` show, and which of your decisions does it depend on?",
            "Every decision of apply and install_generation is made in the transaction that writes, on what that transaction read under its lock; contention on the way is the caller's to retry.",
            "The invariants hold however the threads interleave, and contention is never a refusal. Which of your decisions did the interleaving reach, and what had it read?",
        ],
        None,
    ),
    (
        "L3.7",
        [
            "An apply paused on fund-A: is fund-B still free for others?",
            "What your transaction locks. A lock covers what the database locks: a row lock one resource, SQLite's write lock the whole file.",
            "On PostgreSQL a call on fund-A holds back work on fund-A and nothing else. What does your transaction lock while it is paused, and is it exactly fund-A's row?",
        ],
        None,
    ),
    (
        "L3.8",
        [
            "Two requests changed one value at once, and the answers or the value fit no serial order of the two (see the step). What did your paused call read before the pause, and what did it write after it?",
            "The transaction in which apply reads the value and writes it back: what keeps the other request out between the read and the write.",
            "Two requests on one resource come out as if one ran after the other: both answers and the value fit one order. Could the other request change what your paused call had read before that call wrote?",
        ],
        None,
    ),
    (
        "L4.1",
        [
            "The same intent arrives twice. What does your apply know about the first one when the second arrives?",
            "The record: what apply stores when it applies a request, and what it looks for when a request arrives.",
            "The same intent twice has one effect, and the copy is answered with the stored result. What does your apply know of the first one when the copy arrives, and what does it answer?",
        ],
        None,
    ),
    (
        "L4.2",
        [
            "The value moved since r1 was applied. What does a replay of r1 answer?",
            "The replay's answer: where its result comes from.",
            "A copy gets the answer the first apply gave and changes nothing, however the value moved since. Where does your replay's result come from?",
        ],
        None,
    ),
    (
        "L4.3",
        [
            "The same request id comes with another delta. What does your apply answer?",
            "The point where apply finds a record for the request id and decides between a replay and a refusal.",
            "The same request id with another delta is a reused id for another intent: a conflict, and nothing changes. What does your apply compare before it answers from the record?",
        ],
        None,
    ),
    (
        "L4.4",
        [
            "r1 on fund-A and r1 on fund-B: one request or two, for your apply?",
            "The key under which apply stores a record and looks it up.",
            "A request is identified within its resource: the same id on two resources is two requests. What is your record's key made of?",
        ],
        None,
    ),
    (
        "L4.5",
        [
            "Two request ids under one generation. What identifies a request in your apply?",
            "The key under which apply stores a record and looks it up, and the part the generation plays in it.",
            "The request id names the intent; the generation only says who may act. Does anything in your record's key, or in its lookup, depend on the generation?",
        ],
        None,
    ),
    (
        "L4.6",
        [
            "A stale worker replays a request. What does it learn from your apply?",
            "The order of apply's decisions: the check of the generation and the lookup of the record.",
            "The generation decides first: a worker whose authority is gone learns nothing, not even a stored result. Which does your apply decide on first, the generation or the record?",
        ],
        None,
    ),
    (
        "L4.7",
        [
            "The same request comes again under a newer installed generation. One effect or two?",
            "The lookup of the record, and what apply does when it finds one.",
            "The record says what happened to a request, whatever generation it came with: a copy under a newer generation is a replay. What does your lookup compare besides the resource and the request id?",
        ],
        None,
    ),
    (
        "L4.8",
        [
            "A request was refused or failed. What did your apply store?",
            "The paths of apply that end without applying: each refusal, and a failure between the writes. What each leaves in the database, and in which transaction.",
            "A call that does not apply leaves nothing behind: a record of it would turn a later copy into a replay of nothing. On the path this step took, what did your apply write, and did it stay?",
        ],
        None,
    ),
    (
        "L4.9",
        [
            "The worker's response was lost and it retries. What does your apply answer the retry, and what does it change?",
            "What apply does when it finds a record for the request: what it answers, and what it writes.",
            "A retry is a copy of a request already applied: it gets the stored result and applies nothing, even if other requests moved the value since. What did your apply answer the retry, and what did it write?",
        ],
        None,
    ),
    (
        "L4.10",
        [
            "The same request on two connections at once: at the interleaving in `got`, what did each copy see when it looked for the record?",
            "The transaction in which apply looks the record up and writes the value and the record: what it holds from the lookup to the commit.",
            "The same request delivered twice has one effect and one record, and each copy gets the original result (or contention, and tries again), never another error. When the second copy looked for the record, could the first one's still be on its way?",
        ],
        Some([
            "The same request on two sessions at once: what did each copy see when it looked for the record?",
            "The transaction in which apply looks the record up and writes the value and the record, and the resource's row lock: what it holds from the lookup to the commit.",
            "The same request delivered twice has one effect and one record, and each copy gets the original result (or contention, and tries again), never another error. When the second copy looked for the record, could the first one's still be on its way?",
        ]),
    ),
    (
        "L4.11",
        [
            "Two ids that differ (case, whitespace, one byte): one request or two, for your apply?",
            "How apply stores the request id and looks it up: every step between the argument and the key.",
            "The request id is opaque: two ids that differ in any byte are two requests. Does anything in your code change the id on its way to the record?",
        ],
        None,
    ),
    (
        "L5.1",
        [
            "A fault strikes between the value and the record. What survives of your apply's writes?",
            "The transaction, or transactions, that hold apply's two writes, and where each commits.",
            "A fault between the value and the record leaves neither, and the retry then applies once. In how many transactions does your apply write the two, and when does each commit?",
        ],
        None,
    ),
    (
        "L5.2",
        [
            "The external call is not undone by the rollback: that is the limit this claim shows. Did your value or record survive the fault too?",
            "The ledger keeping the call is not a bug to fix; a value or record that survived the fault is.",
            "The external call stays; the value and the record roll back together when the fault strikes. What of your apply's writes outlived the fault?",
        ],
        None,
    ),
    (
        "L5.3",
        [
            "A direct SQL write goes around apply: that is the limit this claim shows. What did your own functions leave in the lab before it?",
            "The contract covers only writes that go through apply; the test's setup still uses your functions.",
            "The bypass is not yours to stop; the steps before it are yours, and they behave as the contract says. Which of those steps did your functions answer otherwise (see `got`)?",
        ],
        None,
    ),
    (
        "L5.4",
        [
            "An old generation is restored: that is the limit this claim shows. What did your functions do before and after the restore?",
            "apply trusts the installed generation, whatever put it there.",
            "The generation installed now decides, whatever wrote it, so the restore makes the old generation's requests accepted again. What did your apply compare with, before and after the restore?",
        ],
        None,
    ),
    (
        "L5.5",
        [
            "Every connection closed and opened again. What was committed before?",
            "Where your functions end their transactions: what a call leaves committed when it returns.",
            "A value or a record is kept across connections only once committed. Did your call commit before it returned, and what did it commit?",
        ],
        None,
    ),
    (
        "L5.6",
        [
            "A process killed between the value and the record: what did the file keep of your apply's writes?",
            "The transaction, or transactions, that hold apply's writes, and when each commits.",
            "SQLite keeps what was committed and nothing else when a process dies: killed between the two writes leaves neither, killed after the commit keeps both. Which of your writes were committed at the moment of the kill?",
        ],
        None,
    ),
    (
        "L5.7",
        [
            "The sqlite3 shell's direct UPDATE goes around the contract: that is the limit shown. What did your functions leave in the lab before it?",
            "The contract covers only writes that go through apply, whoever else opens the file.",
            "The bypass is not yours to stop; the steps before it are yours, and they behave as the contract says. Which of those steps did your functions answer otherwise?",
        ],
        None,
    ),
    (
        "L6.1",
        [
            "This input is malformed. Where does your function check it, and what had it changed by then?",
            "The first lines of your function, before any transaction: input that can never be valid. Then the addition to the value, which may overflow.",
            "Bad input gets its own typed error and changes nothing: an empty id or a generation below 1 before the database is touched, an overflow before any write. Which check answered this input, and what had been written by then?",
        ],
        None,
    ),
    (
        "L7.1",
        [
            "A worker was frozen while a newer holder took the lock and wrote. Which token does your worker present, and where does it get it?",
            "Where your worker gets the token it installs, and the one it presents to apply.",
            "The token the destination checks is one the coordinator raises for every new holder, so the resumed worker's own token is refused. Which token did your worker install, and which did it present?",
        ],
        None,
    ),
    (
        "L7.2",
        [
            "Your worker held the lock, was frozen, and woke. What does holding the lock prove at that moment?",
            "Nothing, once you have been frozen: only a token the destination checks tells old from new.",
            "Holding the lock proves nothing after a freeze; the destination refuses the woken worker by its token. Which token did your worker install, and which did it present to apply?",
        ],
        None,
    ),
    (
        "L7.3",
        [
            "The leader was killed between two holders. Is the next holder's token higher than yours, whoever leads now?",
            "Where your worker's token comes from, and whether it survives a new leader.",
            "Tokens keep rising across a leader failure: a value the cluster replicates before it grants the lock survives, one kept by a process does not. Where does your worker's token come from?",
        ],
        None,
    ),
    (
        "L7.4",
        [
            "Your worker could not show that it holds the newest authority (a newer generation was installed, or its lease was lost before the lock was granted). What did it do next?",
            "What your worker does after its install finds a newer generation, and after the lock is not granted.",
            "A worker that cannot show it holds the newest authority stops without calling apply. What did your worker do after that install, or after that lock failed?",
        ],
        None,
    ),
    (
        "L7.5",
        [
            "The worker was killed after its commit and the request is retried in a new process. What request id does the retry present?",
            "The id names the request, not the attempt or the token.",
            "A retry of a request whose response was lost gets its original result: it is the same request, even in a new process under a new lock. Which request id did your retry present?",
        ],
        None,
    ),
    (
        "L7.6",
        [
            "One worker took its lease first but the lock second. Which number orders the holders in your worker?",
            "The lease id follows the order leases were granted in; a counter of your own starts again in every process.",
            "The token comes from the lock: holders are ordered as the lock was granted, and each raises the installed generation. What does your worker take its token from?",
        ],
        None,
    ),
    (
        "L8.1",
        [
            "The worker's own UPDATE of the table went through (see `got`). Which rights does the worker's role have on the tables, and who runs apply's body?",
            "A function marked SECURITY DEFINER runs with its owner's rights: the caller needs no right on the tables at all.",
            "The worker reaches the tables only through apply, which runs with its owner's rights; its own UPDATE is refused. Which right on the tables does your file leave the worker, granted by name or through PUBLIC?",
        ],
        None,
    ),
    (
        "L8.2",
        [
            "A worker called install_generation and it ran. Who may call a function that nobody granted anything on?",
            "A new function is executable by PUBLIC, every role, until that right is taken back.",
            "Only the authority installs: the worker's call of install_generation is refused, the authority's lands. Who holds EXECUTE on install_generation in your file, by name or through PUBLIC?",
        ],
        None,
    ),
    (
        "L8.3",
        [
            "The owner's UPDATE wrote an old generation back. What in your file runs when anyone, not only install_generation, writes a generation?",
            "install_generation's check sees only its own callers; a rule of the schema (a trigger on the table) sees every UPDATE.",
            "A generation never goes backwards, whoever writes it, and only a rule of the schema sees every write. What in your file refuses an UPDATE that lowers a generation?",
        ],
        None,
    ),
    (
        "L8.4",
        [
            "This claim shows what stays open; which step of it did your functions change (see `got`)?",
            "The owner lifts the rules and writes; then apply runs with a fault between its writes. Your functions must still judge and write as in L2 and L5.",
            "Nothing here is yours to close: your functions judge and write as the earlier claims ask, and the fault rolls their writes back. Which step did your functions answer otherwise?",
        ],
        None,
    ),
    (
        "L8.5",
        [
            "Without the worker's temporary relations your apply refused this stale request; with them in place it did not (see `got`). Which relation named resources does your apply's body read, and whose search_path picks it?",
            "An unqualified table name is looked up in the search_path in force when the statement runs. A function without a search_path of its own runs in its caller's, where the caller's temporary schema (pg_temp) comes first unless it is named later; SECURITY DEFINER then lets the caller's view read and write with the owner's rights.",
            "A function the worker calls reads the lab's tables, whatever relations the worker made. Which search_path does your apply run with, and where does pg_temp fall in it?",
        ],
        None,
    ),
    (
        "L8.6",
        [
            "One of the authority's steps came out otherwise than its part allows (see the step and `got`). Which rights does fencing_authority hold, granted to it or to every role (PUBLIC)?",
            "The authority's part is install_generation and nothing else. Calling apply is the worker's part, and install_generation writes the tables with its owner's rights (SECURITY DEFINER), so the authority needs no right on resources or requests.",
            "The authority may install and nothing else: its call of apply and its own writes on the tables are refused. Which rights does your file give fencing_authority beyond EXECUTE on install_generation, by name or through PUBLIC?",
        ],
        None,
    ),
];
