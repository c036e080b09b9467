//! How a PostgreSQL session reaches its checkpoints in the server, whatever
//! SQL the code under test runs.
//!
//! A worker's or the authority's statement is paused where it stands, inside
//! the server, holding whatever locks it holds, while the test's hook runs;
//! then it goes on, or fails with the fault the hook asked for. The pieces:
//!
//! - **Triggers** (made by [`triggers`] in every lab's schema): before a row
//!   of `resources` gets a new `value` ([`Checkpoint::BeforeEffect`]) or a
//!   new `generation` ([`Checkpoint::BeforeInstall`]), and before a row goes
//!   into `requests` ([`Checkpoint::BeforeRecord`]), the row trigger calls
//!   `fencing_lab_checkpoint()`. By then an `UPDATE` holds the row's lock.
//! - **A gate per session**, made of advisory locks on keys only the lab's
//!   user can name: each lab keeps a random secret, which with a session's
//!   backend pid gives its keys (`fencing_lab_gate`). While a call with a
//!   hook runs, the lab's control session holds the watch lock and the gate
//!   `n`, both exclusively. The trigger function's wait finds the watch lock
//!   taken (a cheap try-lock: a session that is not in such a call passes
//!   straight through), reads the gate's number from `pg_locks`, announces
//!   the checkpoint with `RAISE NOTICE`, and waits for a shared lock on the
//!   gate.
//! - **The announcement** reaches the client's notice callback (set when the
//!   session connects), which sends it over a channel to the thread that
//!   called `apply` or `install_generation`. That thread runs the hook: the
//!   learner's code runs on a thread of its own meanwhile ([`serve`]), since
//!   its statement is blocked in the server until the hook is done.
//! - **The release**: the control session first takes the next gate
//!   `n + 1`, takes or lets go of the fault lock, and only then lets gate
//!   `n` go. The session wakes, sees whether the fault lock
//!   is held, and either goes on (its next checkpoint waits at `n + 1`) or
//!   raises SQLSTATE `FL001`. `?` turns that back into the hook's own
//!   [`LabError`] (`fencing_lab_api::fault`), and the statement, with the transaction,
//!   has failed like a real fault.
//!
//! On the PostgreSQL track, reads are not watched in the server: PostgreSQL
//! has no trigger on `SELECT`. [`Checkpoint::GenerationRead`] and [`Checkpoint::RecordRead`]
//! fire from [`PgTx::installed_generation`](super::PgTx::installed_generation)
//! and [`PgTx::find_record`](super::PgTx::find_record), over the same
//! channel, and right after a statement of the code's own
//! ([`PgTx::sql`](super::PgTx::sql)) returns, holding its locks, when the
//! server's plan of that statement reads the generation or the `requests`
//! table ([`Event::OwnRead`]; the plan is read in `super::own`). A call that
//! ran SQL the harness cannot see into (a batch) and never reached one of
//! its function's read checkpoints is noted, so a test that needed such a
//! read says so instead of guessing at a mistake ([`unread`]). On the SQL
//! functions' track the reads happen inside a function, out of the
//! client's sight: there a row security policy reaches the same gate once
//! per statement that reads a table, at the first row its scan looks at
//! (`reads`), before any lock the read statement takes.
//!
//! **Nobody else sees the watch.** The code under test must not be able to
//! tell a call with a hook armed from one without: a contract that locked
//! only when watched would pass every race test and fail in production. So
//! every session is the same whether or not its call is watched (the
//! triggers, the policies and their wait run alike; the statements the
//! harness runs on the session itself, its pid at connect and the plan of
//! each statement of the code's own, run in every call), and what differs
//! is out of the learner's roles' sight: the wait and the keys belong to the
//! lab's user, the keys are secret, and on the lab's private server the
//! lock table and the sessions' statistics are taken from `PUBLIC`
//! ([`HIDDEN`]). Time is what stays visible: a statement paused at a gate
//! returns later than one that was not, and a contract that times its own
//! statements (`clock_timestamp()`, or a short `statement_timeout` that
//! cancels a paused one) can learn it was paused, after the pause, by which
//! the test has already acted. So, after the fact, can the test's own
//! actions: another session's commit moves the next snapshot on
//! (`pg_current_snapshot()`), and the client library numbers its prepared
//! statements across the whole test process (`pg_prepared_statements`).
//! Neither says that a hook is armed before the code decides. On a server named by
//! `FENCING_LAB_PG_URL`, whose privileges are not the lab's to change, the
//! lock table and the sessions stay in sight: a contract that compared the
//! keys held with its sessions' pids could still find its watch there, so
//! a grade that counts is made on the lab's own server.
//!
//! Every wait is bounded: the session waits at a gate for at most
//! [`STUCK`] (then its statement fails with SQLSTATE `FL002`), and the
//! calling thread waits as long for the next announcement before it cancels
//! the statement and fails the test.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use postgres::NoTls;
use postgres::error::DbError;

use super::{PgConnection, PgLab};
use crate::LabError;
use crate::checkpoint::{Checkpoint, Hooks};

/// How long a paused session, or the thread serving it, waits for the other
/// side before the protocol counts as stuck. Far longer than any hook runs.
pub(crate) const STUCK: Duration = Duration::from_secs(60);

/// The gate's key, its wait, the trigger function that calls it and its
/// triggers, created in every lab's schema `schema`.
///
/// The keys are the lab's secret. A session's watch lock is the `bigint`
/// advisory key `fencing_lab_gate(pid)`, its fault lock the next key, and
/// gate `n` the watch lock's key plus `n + 1`; `fencing_lab_gate` makes
/// them from the session's backend pid and a random number kept in
/// `fencing_lab_secret`, which only the lab's user may read. So the code
/// under test cannot name a key of its own session, let alone probe it:
/// a try-lock of its own finds the same with a hook armed or not, and
/// [`HIDDEN`] takes away the views that would list the keys. With
/// [`crate::UNGUARDED`] the table holds no secret and a session's keys
/// carry its pid in their upper half, where the gate once put it for all
/// to find: `.ci/hostile-observer` probes that to prove its watch cases
/// were stopped by the secret and by nothing else.
///
/// The wait runs as the lab's user (`SECURITY DEFINER`, its search path
/// fixed, the lab's names written out), the code under test may not call it
/// (its triggers do, through a function of the lab's user), and its own
/// `lock_timeout` (restored when it returns) lets it wait at the gate; the
/// session's 1 ms stays in force for every other lock.
///
/// The triggers fire for each row written, unlike the read policies of
/// the SQL functions' track (`reads`), which fire once per statement: a
/// write's checkpoint stands for one row changed under its lock, and a
/// correct call writes one row of `resources` and adds one record, so
/// their number does not grow with the tables. A statement that wrote
/// every resource's row would lock them all, which L3.7 refuses.
pub(crate) fn triggers(schema: &str) -> String {
    format!(
        "{}
    CREATE FUNCTION fencing_lab_checkpoint() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        PERFORM {schema}.fencing_lab_wait(TG_ARGV[0]);
        RETURN NEW;
    END
    $$;

    CREATE TRIGGER fencing_lab_before_effect
        BEFORE UPDATE OF value ON resources
        FOR EACH ROW EXECUTE FUNCTION fencing_lab_checkpoint('before effect');
    CREATE TRIGGER fencing_lab_before_install
        BEFORE UPDATE OF generation ON resources
        FOR EACH ROW EXECUTE FUNCTION fencing_lab_checkpoint('before install');
    CREATE TRIGGER fencing_lab_before_record
        BEFORE INSERT ON requests
        FOR EACH ROW EXECUTE FUNCTION fencing_lab_checkpoint('before record');
",
        wait(schema)
    )
}

/// The secret, the keys it gives and the wait at the gate, in `schema`
/// (see [`triggers`]).
fn wait(schema: &str) -> String {
    let secret = match std::env::var_os(crate::UNGUARDED) {
        Some(_) => "NULL::bigint",
        // 45 random bits: with the pid added and shifted by 16, a key
        // stays below 2^62.
        None => "('x' || translate(pg_catalog.gen_random_uuid()::text, '-', ''))::bit(45)::bigint",
    };
    format!(
        "
    CREATE TABLE fencing_lab_secret (secret bigint);
    INSERT INTO fencing_lab_secret VALUES ({secret});

    CREATE FUNCTION fencing_lab_gate(session integer) RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT CASE WHEN secret IS NULL THEN session::bigint << 32
                    ELSE (secret + session) << 16 END
          FROM {schema}.fencing_lab_secret
    $$;
    REVOKE EXECUTE ON FUNCTION fencing_lab_gate(integer) FROM PUBLIC;

    CREATE FUNCTION fencing_lab_wait(checkpoint text) RETURNS void
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET lock_timeout = '60s'
    SET client_min_messages = 'notice'
    AS $$
    DECLARE
        -- The watch lock; the fault lock is the next key, gate n is n after that.
        watch bigint := {schema}.fencing_lab_gate(pg_backend_pid());
        -- A gate's key as pg_locks shows it: the upper half, the lower one.
        upper oid := (watch >> 32)::oid;
        lower bigint := watch & 4294967295;
        gate bigint;
    BEGIN
        -- Cheap first: outside a call with a hook, the watch lock is free.
        IF pg_try_advisory_lock_shared(watch) THEN
            PERFORM pg_advisory_unlock_shared(watch);
            RETURN;
        END IF;
        SELECT max(objid::bigint) - lower - 1 INTO gate FROM pg_locks
         WHERE locktype = 'advisory' AND objsubid = 1 AND classid = upper
           AND objid::bigint BETWEEN lower + 2 AND lower + 65535
           AND mode = 'ExclusiveLock' AND granted;
        IF gate IS NULL THEN
            RETURN;
        END IF;
        RAISE NOTICE 'fencing-lab checkpoint: %', checkpoint;
        BEGIN
            PERFORM pg_advisory_lock_shared(watch + 1 + gate);
        EXCEPTION WHEN lock_not_available THEN
            RAISE EXCEPTION 'fencing-lab: the test never let this session go on % (stuck for %)',
                checkpoint, current_setting('lock_timeout') USING ERRCODE = 'FL002';
        END;
        PERFORM pg_advisory_unlock_shared(watch + 1 + gate);
        IF NOT pg_try_advisory_lock_shared(watch + 1) THEN
            RAISE EXCEPTION 'fencing-lab checkpoint fault %', checkpoint USING ERRCODE = 'FL001';
        END IF;
        PERFORM pg_advisory_unlock_shared(watch + 1);
    END
    $$;
    REVOKE EXECUTE ON FUNCTION fencing_lab_wait(text) FROM PUBLIC;
"
    )
}

/// What the learner's roles may not read on the lab's private server, so
/// that a call with a hook armed looks to them like any other: the lock
/// table (`pg_locks`, `pg_lock_status`, and who blocks whom), the sessions
/// (`pg_stat_activity` and every `pg_stat_get_*` function, which would
/// count the control session, the lab's commits and the other sessions'
/// waits), and the signals whose refusal tells a superuser's session from
/// no session at a pid (`pg_cancel_backend`, `pg_terminate_backend`: the
/// control session opens at a lab's first watched call). Taken from `PUBLIC` once per server, before any lab exists; the
/// lab's user is the superuser and keeps them. The advisory-lock functions
/// stay: a correct solution may take a lock of its own
/// (`alternative-advisory-lock-per-resource`), and the gate's keys are
/// secret ([`triggers`]).
///
/// Never on a server named by `FENCING_LAB_PG_URL`, which is not the lab's
/// to change (there the watch can still be found, see the module's docs),
/// nor with [`crate::UNGUARDED`].
pub(crate) const HIDDEN: &str = "
    DO $$
    DECLARE
        hidden regprocedure;
    BEGIN
        FOR hidden IN
            SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace
               AND (p.proname LIKE 'pg\\_stat\\_get\\_%'
                    OR p.proname IN ('pg_lock_status', 'pg_blocking_pids',
                                     'pg_safe_snapshot_blocking_pids',
                                     'pg_isolation_test_session_is_blocked',
                                     'pg_cancel_backend', 'pg_terminate_backend'))
        LOOP
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', hidden);
        END LOOP;
    END
    $$;
    REVOKE SELECT ON pg_catalog.pg_locks, pg_catalog.pg_stat_activity FROM PUBLIC;
";

/// The read checkpoints inside the server, for the SQL functions' track
/// (`src/pg/contract.rs`), where a call is one statement and no read
/// returns to the client: a row security policy on each table, forced on
/// its owner (the role the functions run as), whose `USING` expression
/// reaches the gate. A read of `resources` is
/// [`Checkpoint::GenerationRead`], of `requests` [`Checkpoint::RecordRead`].
/// The writes keep their own policies, which let every row through: only
/// reads are watched here, and the tables' privileges decide who may write.
///
/// **Once per statement, not once per row.** The expression is a scalar
/// subquery that names no column, `(SELECT fencing_lab_read(…))`, which
/// PostgreSQL plans as an InitPlan: EXPLAIN shows the scan's
/// `Filter: ($0 AND …)` under `InitPlan 1 (returns $0)` (on 18,
/// `(InitPlan 1).col1`). It runs the first time the scan tests a row and
/// its answer is kept for the rest of the statement, so a lookup that reads
/// the table row by row (a loop over `requests`, a condition on a function
/// of a column that no index serves) is paused once, like the reference's
/// index lookup, and a test that pauses at each checkpoint in turn meets a
/// number of them that does not grow with the table. That is what the
/// other tracks do: their lookup reaches its checkpoint once, whatever it
/// finds. Called bare, the function would run for every row read and
/// pause such a lookup once per row: a test armed at its first read would
/// run out of time.
///
/// Row security keeps the expression on the table's scan, so it is not the
/// `One-Time Filter` the same subquery in a `WHERE` of one's own would
/// give, run as the statement starts. When it runs: a `SELECT`, or an `UPDATE`'s or a
/// `DELETE`'s search, reaches the checkpoint at the first row its scan
/// looks at, before its own conditions are tested on it (after an index's,
/// which choose the rows the scan gets); a `SELECT … FOR UPDATE` before it
/// locks that row. A scan that gets no row (an index lookup that finds
/// nothing, an empty table) reaches none; a scan of a whole table reaches
/// it even when no row matches. An `UPDATE` also checks each new row
/// against the policy (a row it writes must stay readable): a second
/// InitPlan, which reaches the checkpoint once more, after the first row's
/// write trigger. Under READ COMMITTED a locked row changed meanwhile is
/// read again at its latest version, tested with the answer already kept:
/// no second checkpoint there. When the InitPlan runs is the plan's doing,
/// alike in every call, with a hook armed or not.
///
/// Made by the harness's superuser, so the learner's file, run as the
/// tables' owner, cannot replace the function; the catalogue check there
/// holds the policies as made. It runs as the lab's user, like the wait it
/// calls ([`triggers`]). A policy's expression runs with the rights of the
/// role that reads, so the learner's roles may call the function too: it
/// announces the two reads and nothing else, so their SQL can at most
/// announce a read it could have made, never a write it did not.
#[cfg(feature = "postgres-sql")]
pub(crate) fn reads(schema: &str) -> String {
    format!(
        "
    CREATE FUNCTION fencing_lab_read(checkpoint text) RETURNS boolean
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        -- The policies must call it, so the learner's roles may too: only
        -- a read may be announced this way, never a write's checkpoint.
        IF checkpoint NOT IN ('generation read', 'record read') THEN
            RAISE EXCEPTION 'not allowed in the lab: fencing_lab_read(%)', checkpoint;
        END IF;
        PERFORM {schema}.fencing_lab_wait(checkpoint);
        RETURN true;
    END
    $$;

    ALTER TABLE resources ENABLE ROW LEVEL SECURITY;
    ALTER TABLE resources FORCE ROW LEVEL SECURITY;
    ALTER TABLE requests ENABLE ROW LEVEL SECURITY;
    ALTER TABLE requests FORCE ROW LEVEL SECURITY;
    CREATE POLICY fencing_lab_read ON resources FOR SELECT
        USING ((SELECT fencing_lab_read('generation read')));
    CREATE POLICY fencing_lab_read ON requests FOR SELECT
        USING ((SELECT fencing_lab_read('record read')));
    CREATE POLICY fencing_lab_insert ON resources FOR INSERT WITH CHECK (true);
    CREATE POLICY fencing_lab_insert ON requests FOR INSERT WITH CHECK (true);
    CREATE POLICY fencing_lab_update ON resources FOR UPDATE USING (true) WITH CHECK (true);
    CREATE POLICY fencing_lab_update ON requests FOR UPDATE USING (true) WITH CHECK (true);
    CREATE POLICY fencing_lab_delete ON resources FOR DELETE USING (true);
    CREATE POLICY fencing_lab_delete ON requests FOR DELETE USING (true);
"
    )
}

/// How the trigger function's announcement starts.
const NOTICE: &str = "fencing-lab checkpoint: ";

/// What a session notes when the code under test ran a statement of its own
/// whose reads the harness could not tell (see [`Link::note_unread`]) and
/// never reached, in a way the harness saw, a read checkpoint its function
/// has (`generation`, `record`: which ones it missed).
fn unread(generation: bool, record: bool) -> &'static str {
    match (generation, record) {
        (true, true) => {
            "this call ran SQL of its own through `tx.sql()` that the harness cannot see into (a `batch_execute`, or a statement other than SELECT, INSERT, UPDATE, DELETE, WITH, VALUES or TABLE), and no read of the generation or of a record that it could see. PostgreSQL has no trigger on SELECT: the harness learns what a statement of your own read from the server's plan of it (EXPLAIN), which it can ask for a single statement run with `tx.sql().query`, `query_one`, `query_opt` or `execute`, not for a batch. If that statement read the generation or a record, this test could not pause right after it. Run it as a single statement, or check this claim on SQLite, where every statement reaches the checkpoints"
        }
        (true, false) => {
            "this call ran SQL of its own through `tx.sql()` that the harness cannot see into (a `batch_execute`, or a statement other than SELECT, INSERT, UPDATE, DELETE, WITH, VALUES or TABLE), and no read of the generation that it could see. PostgreSQL has no trigger on SELECT: the harness learns what a statement of your own read from the server's plan of it (EXPLAIN), which it can ask for a single statement run with `tx.sql().query`, `query_one`, `query_opt` or `execute`, not for a batch. If that statement read the generation, this test could not pause right after it. Run it as a single statement, or check this claim on SQLite, where every statement reaches the checkpoints"
        }
        _ => {
            "this call ran SQL of its own through `tx.sql()` that the harness cannot see into (a `batch_execute`, or a statement other than SELECT, INSERT, UPDATE, DELETE, WITH, VALUES or TABLE), and no lookup of a record that it could see. PostgreSQL has no trigger on SELECT: the harness learns what a statement of your own read from the server's plan of it (EXPLAIN), which it can ask for a single statement run with `tx.sql().query`, `query_one`, `query_opt` or `execute`, not for a batch. If that statement looked the record up, this test could not pause right after it. Run it as a single statement, or check this claim on SQLite, where every statement reaches the checkpoints"
        }
    }
}

/// What the learner's thread tells the thread that serves its checkpoints.
pub(crate) enum Event {
    /// A checkpoint was reached. `reply` is `None` when the session waits
    /// at its gate in the server, or the channel to answer on when the
    /// learner's thread waits itself (the read checkpoints).
    Reached {
        /// Which one.
        checkpoint: Checkpoint,
        /// Where the verdict goes, for a checkpoint reached in the client.
        reply: Option<Sender<Result<(), LabError>>>,
    },
    /// A statement of the code's own read `checkpoint`'s data (its plan
    /// says so) and has returned: fire it as a read, like SQLite's
    /// statement trace does. `done` is answered once the hook has run; an
    /// error from the hook is kept for the end of the call, as a read
    /// cannot be undone.
    OwnRead {
        /// Which one.
        checkpoint: Checkpoint,
        /// Answered when the hook has run.
        done: Sender<()>,
    },
    /// The learner's code returned (or unwound).
    Finished,
}

/// The part of a session the learner's thread shares with the thread that
/// serves its checkpoints: everything here is `Send` and `Sync`.
#[derive(Default)]
pub(crate) struct Link {
    /// Where announcements go while a call with a hook runs.
    events: Mutex<Option<Sender<Event>>>,
    /// The fault a hook raised at a gate, until `?` picks it up.
    fault: Mutex<Option<LabError>>,
    /// What the current call did that the checkpoints must account for.
    seen: Mutex<Seen>,
}

/// What a call did on its session, as far as the read checkpoints go.
#[derive(Default)]
struct Seen {
    /// It ran SQL of its own through `PgTx::sql` whose reads the harness
    /// could not tell.
    unread: bool,
    /// It reached [`Checkpoint::GenerationRead`] (through the method, or
    /// a statement of its own whose plan reads the generation).
    generation_read: bool,
    /// It reached [`Checkpoint::RecordRead`], the same two ways.
    record_read: bool,
}

impl Link {
    /// The notice callback: an announcement from the trigger function.
    pub(crate) fn notice(&self, notice: &DbError) {
        let Some(name) = notice.message().strip_prefix(NOTICE) else {
            return;
        };
        let checkpoint = match name {
            "before effect" => Checkpoint::BeforeEffect,
            "before install" => Checkpoint::BeforeInstall,
            "generation read" => Checkpoint::GenerationRead,
            "record read" => Checkpoint::RecordRead,
            _ => Checkpoint::BeforeRecord,
        };
        self.send(Event::Reached {
            checkpoint,
            reply: None,
        });
    }

    /// A checkpoint reached in the client (after a read): waits for the
    /// hook's verdict. Outside a call with a hook, nothing to wait for.
    pub(crate) fn reached(&self, checkpoint: Checkpoint) -> Result<(), LabError> {
        self.saw(checkpoint);
        let (reply, verdict) = mpsc::channel();
        if !self.send(Event::Reached {
            checkpoint,
            reply: Some(reply),
        }) {
            return Ok(());
        }
        verdict.recv_timeout(STUCK).unwrap_or_else(|_| {
            Err(LabError::InjectedFault(
                "the test stopped answering its checkpoints",
            ))
        })
    }

    /// A statement of the code's own read `checkpoint`'s data and has
    /// returned, holding whatever locks it took: fires `checkpoint` as a
    /// read and waits until the hook has run. Outside a call with a hook,
    /// nothing to wait for.
    pub(crate) fn read_by_own_sql(&self, checkpoint: Checkpoint) {
        self.saw(checkpoint);
        let (done, ran) = mpsc::channel();
        if self.send(Event::OwnRead { checkpoint, done }) {
            let _ = ran.recv_timeout(STUCK);
        }
    }

    /// Whether a call with a hook runs: only then do the reads of a
    /// statement of the code's own reach the hook.
    pub(crate) fn watching(&self) -> bool {
        lock(&self.events).is_some()
    }

    /// Notes that the call ran SQL of its own whose reads the harness could
    /// not tell (a batch, or a statement it cannot ask the plan of).
    pub(crate) fn note_unread(&self) {
        lock(&self.seen).unread = true;
    }

    fn saw(&self, checkpoint: Checkpoint) {
        let mut seen = lock(&self.seen);
        match checkpoint {
            Checkpoint::GenerationRead => seen.generation_read = true,
            Checkpoint::RecordRead => seen.record_read = true,
            _ => {}
        }
    }

    /// Why the call that just ended could not be fully observed, if so: it
    /// ran SQL of its own the harness could not see into, and never reached
    /// one of `reads` (the read checkpoints its function has) in a way the
    /// harness saw.
    fn unobserved(&self, reads: &[Checkpoint]) -> Option<&'static str> {
        let seen = std::mem::take(&mut *lock(&self.seen));
        let generation = reads.contains(&Checkpoint::GenerationRead) && !seen.generation_read;
        let record = reads.contains(&Checkpoint::RecordRead) && !seen.record_read;
        (seen.unread && (generation || record)).then(|| unread(generation, record))
    }

    /// Sends `event` to the serving thread, if a call with a hook runs.
    fn send(&self, event: Event) -> bool {
        match lock(&self.events).as_ref() {
            Some(events) => events.send(event).is_ok(),
            None => false,
        }
    }
}

thread_local! {
    /// The hooks of every session used on this thread, by session id: a
    /// hook is not `Send`, so it stays on the thread that installed it.
    static HOOKS: RefCell<HashMap<u64, Rc<Hooks>>> = RefCell::new(HashMap::new());
}

/// Gives every session its own id in [`HOOKS`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A new session id.
pub(crate) fn new_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The hooks of session `id` on this thread.
pub(crate) fn hooks(id: u64) -> Rc<Hooks> {
    HOOKS.with(|hooks| Rc::clone(hooks.borrow_mut().entry(id).or_default()))
}

/// Forgets session `id`'s hooks on this thread.
pub(crate) fn forget(id: u64) {
    // Dropped outside the borrow: a hook may own another session, whose
    // drop comes back here. At thread exit the map may be gone already.
    let removed = HOOKS
        .try_with(|hooks| hooks.borrow_mut().remove(&id))
        .ok()
        .flatten();
    drop(removed);
}

/// Runs one call of the learner's code (or the reference's) on `db`, with
/// its checkpoints served on this thread (see the module's docs). `reads`
/// are the read checkpoints the function has: a call that runs SQL of its
/// own and never reaches one of them through the methods is noted.
pub(crate) fn serve<T: Send>(
    db: &mut PgConnection,
    reads: &[Checkpoint],
    call: impl FnOnce(&mut PgConnection) -> Result<T, LabError> + Send,
) -> Result<T, LabError> {
    let hooks = db.hooks();
    let link = Arc::clone(&db.link);
    *lock(&link.seen) = Seen::default();
    let result = hooks.around(|| {
        if !hooks.is_set() {
            // Nothing to pause: no gate, no thread.
            return call(db);
        }
        let session = db.session();
        let mut gate = Gate::arm(&db.lab, session)?;
        let cancel = db.client.cancel_token();
        let (sender, events) = mpsc::channel();
        *lock(&link.events) = Some(sender.clone());
        let (result, stuck) = thread::scope(|scope| {
            let learner_link = Arc::clone(&link);
            let learner = scope.spawn(move || {
                let _finished = Finished(sender);
                // A statement failed at a checkpoint comes back as the
                // hook's fault (`From<postgres::Error>`).
                fencing_lab_api::fault::from_server(Some(Box::new(move || {
                    lock(&learner_link.fault).take()
                })));
                call(db)
            });
            let stuck = relay(&events, &hooks, &mut gate, &link);
            if stuck.is_some() {
                // Whatever the session waits for, it stops now.
                let _ = cancel.cancel_query(NoTls);
            }
            let result = match learner.join() {
                Ok(result) => result,
                Err(payload) => panic::resume_unwind(payload),
            };
            (result, stuck)
        });
        *lock(&link.events) = None;
        drop(gate);
        if let Some(why) = stuck {
            panic!("the checkpoint protocol on PostgreSQL is stuck: {why}");
        }
        result
    });
    if let Some(why) = link.unobserved(reads) {
        hooks.note_unobserved(why);
    }
    result
}

/// Answers the learner's thread, event by event, until its call is done:
/// each checkpoint it reaches goes to the hooks, and a session paused at
/// the gate is let go. Returns why the protocol is stuck, if it is.
fn relay(
    events: &mpsc::Receiver<Event>,
    hooks: &Hooks,
    gate: &mut Gate,
    link: &Link,
) -> Option<String> {
    loop {
        match events.recv_timeout(STUCK) {
            Ok(Event::Reached {
                checkpoint,
                reply: Some(reply),
            }) => {
                let _ = reply.send(hooks.reached(checkpoint));
            }
            Ok(Event::Reached {
                checkpoint,
                reply: None,
            }) => {
                let verdict = hooks.reached(checkpoint);
                let fault = verdict.is_err();
                *lock(&link.fault) = verdict.err();
                if let Err(error) = gate.release(fault) {
                    return Some(format!(
                        "the control session could not let the session go on {checkpoint}: {}",
                        crate::describe_error(&error)
                    ));
                }
            }
            Ok(Event::OwnRead { checkpoint, done }) => {
                hooks.after_statement([checkpoint]);
                hooks.flush();
                let _ = done.send(());
            }
            Ok(Event::Finished) | Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                return Some(format!(
                    "the call neither reached a checkpoint nor returned in {} s",
                    STUCK.as_secs()
                ));
            }
        }
    }
}

/// Sends [`Event::Finished`] when the learner's code is done, however.
struct Finished(Sender<Event>);

impl Drop for Finished {
    fn drop(&mut self) {
        let _ = self.0.send(Event::Finished);
        fencing_lab_api::fault::from_server(None);
    }
}

/// One session's gate, held by the lab's control session for one call.
struct Gate {
    /// The lab, whose control session holds the locks.
    lab: PgLab,
    /// The session's watch lock: the fault lock is the next key, gate `n`
    /// is `n` after that (see [`triggers`]).
    watch: i64,
    /// The gate held now.
    number: i64,
    /// Whether the fault lock is held.
    fault: bool,
}

impl Gate {
    /// Takes the watch lock of the session whose backend pid is `session`
    /// and closes the first gate.
    fn arm(lab: &PgLab, session: i32) -> Result<Gate, LabError> {
        let watch = lab.control(|control| {
            let watch: i64 = control
                .query_one("SELECT fencing_lab_gate($1)", &[&session])?
                .get(0);
            control.batch_execute(&format!(
                "SELECT pg_advisory_lock({watch}); SELECT pg_advisory_lock({});",
                watch + 2
            ))?;
            Ok(watch)
        })?;
        Ok(Gate {
            lab: lab.clone(),
            watch,
            number: 1,
            fault: false,
        })
    }

    /// The key of gate `number`.
    fn key(&self, number: i64) -> i64 {
        self.watch + 1 + number
    }

    /// Lets the session through its gate, faulting it if `fault`, with the
    /// next gate closed first.
    fn release(&mut self, fault: bool) -> Result<(), LabError> {
        let next = self.number + 1;
        let mut sql = format!("SELECT pg_advisory_lock({});", self.key(next));
        let fault_lock = self.watch + 1;
        match (fault, self.fault) {
            (true, false) => sql.push_str(&format!("SELECT pg_advisory_lock({fault_lock});")),
            (false, true) => sql.push_str(&format!("SELECT pg_advisory_unlock({fault_lock});")),
            _ => {}
        }
        sql.push_str(&format!(
            "SELECT pg_advisory_unlock({});",
            self.key(self.number)
        ));
        self.lab.control(|control| control.batch_execute(&sql))?;
        self.number = next;
        self.fault = fault;
        Ok(())
    }
}

impl Drop for Gate {
    /// Opens the gate for good: the call is over.
    fn drop(&mut self) {
        let mut sql = format!(
            "SELECT pg_advisory_unlock({}); SELECT pg_advisory_unlock({});",
            self.key(self.number),
            self.watch
        );
        if self.fault {
            sql.push_str(&format!("SELECT pg_advisory_unlock({});", self.watch + 1));
        }
        let _ = self.lab.control(|control| control.batch_execute(&sql));
    }
}

/// Locks `mutex`; a panic elsewhere does not make its data wrong.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The learner's transactions report their reads through the API's
/// `Observer`, which the session's link is.
impl fencing_lab_api::pg::Observer for Link {
    fn reached(&self, read: fencing_lab_api::pg::Read) -> Result<(), LabError> {
        Link::reached(self, checkpoint_of(read))
    }

    fn read_by_own_sql(&self, read: fencing_lab_api::pg::Read) {
        Link::read_by_own_sql(self, checkpoint_of(read));
    }

    fn watching(&self) -> bool {
        Link::watching(self)
    }

    fn note_unread(&self) {
        Link::note_unread(self);
    }

    fn between_transactions(&self) -> Result<(), LabError> {
        Link::reached(self, Checkpoint::TransactionEnded)
    }
}

/// The checkpoint that follows a read.
fn checkpoint_of(read: fencing_lab_api::pg::Read) -> Checkpoint {
    match read {
        fencing_lab_api::pg::Read::Generation => Checkpoint::GenerationRead,
        fencing_lab_api::pg::Read::Record => Checkpoint::RecordRead,
        fencing_lab_api::pg::Read::Value => Checkpoint::ValueRead,
    }
}
