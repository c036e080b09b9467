//! The lab's story, lesson by lesson: the scenes of [`crate::scenes`], the
//! same the graded tests run, told by a [`Narrator`] into a [`Transcript`].
//! `cargo run` prints it; the tests snapshot it.
//!
//! The story runs whichever implementation is compiled in, and tells what it
//! answered. A lesson stops at the first step whose outcome differs from
//! the one its claim expects (an unfinished stub, a panic, or a wrong
//! answer), and says which file to open.

#[cfg(feature = "etcd")]
pub mod etcd;

use crate::claims::{self, Lesson, Track};
use crate::explore::{Route, Setup};
use crate::scenes::{self, Observer, Step, l1, l2, l3, l4, l5, l6};
use crate::transcript::{Halt, Transcript};
use crate::{Checkpoint, Journal, Lab, LabError};

/// One lesson's scenario.
pub type Scenario = fn(&Narrator) -> Result<(), Halt>;

/// The lessons with their scenarios, in order.
pub const SCENARIOS: [(Lesson, Scenario); 6] = [
    (claims::LESSONS[0], l1_authority_can_become_stale),
    (claims::LESSONS[1], l2_explicit_contract),
    (claims::LESSONS[2], l3_decision_in_transaction),
    (claims::LESSONS[3], l4_duplicates),
    (claims::LESSONS[4], l5_counterexamples),
    (claims::LESSONS[5], l6_bad_input),
];

/// The PostgreSQL chapter (feature `postgres`), told after the six lessons.
#[cfg(feature = "postgres")]
pub const POSTGRES: (Lesson, Scenario) = (
    Lesson {
        id: "PG",
        title: "The same contract on a PostgreSQL server",
    },
    postgres_server,
);

/// Lesson 8 (feature `postgres-sql`), told after the PostgreSQL chapter:
/// the contract as SQL functions, and roles.
#[cfg(feature = "postgres-sql")]
pub const POSTGRES_SQL: (Lesson, Scenario) = (claims::LESSONS[7], postgres_sql);

/// Tells the scenes into a transcript: every line as the code under test
/// answered it, and at the first step that differs from what its claim
/// expects, why the lesson stops there.
pub struct Narrator {
    transcript: Transcript,
    track: Track,
}

impl Narrator {
    /// A narrator writing to `transcript`, whose steps belong to `track`
    /// (which exercise files a failed step names).
    pub fn new(transcript: &Transcript, track: Track) -> Narrator {
        Narrator {
            transcript: transcript.clone(),
            track,
        }
    }

    /// The transcript it writes to.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }
}

impl Observer for Narrator {
    fn line(&self, claim: &str, role: &str, text: &str) {
        self.transcript.line(claim, role, text);
    }

    fn note(&self, text: &str) {
        self.transcript.note(text);
    }

    fn check(&self, claim: &'static str, step: Step) -> Result<(), Halt> {
        if !step.failed {
            return Ok(());
        }
        // An unfinished stub says which file to open, in one line.
        if let Some(stub) = scenes::stub_phrase(&step.got) {
            return Err(Halt(stub.to_owned()));
        }
        let Some(claim) = claims::claim(claim) else {
            return Err(Halt(format!("{claim} failed at {step}")));
        };
        let files = claim.files_for_step(self.track, &step.got);
        let mut why = format!(
            "claim {} failed: {}\n    step:     {}\n    expected: {}\n    got:      {}\n",
            claim.id,
            claim.text,
            step.name.replace('\n', "\n    "),
            step.expected,
            step.got,
        );
        if let Some(note) = step.unobserved {
            why.push_str(&format!("    note:     {note}\n"));
        }
        why.push_str(&format!(
            "    open:     {}\n    next:     {}",
            files.join(" and "),
            test_command(claim, self.track)
        ));
        Err(Halt(why))
    }
}

/// The command that runs `claim`'s tests on `track`, and what it shows: the
/// server tracks' tests are compiled with their feature only, and where
/// that feature compiles another track's tests of the claim too, the
/// command runs those as well, so it says which lines are this track's.
pub fn test_command(claim: &claims::Claim, track: Track) -> String {
    let command = claim.test_command(track, []);
    if claim.prefix_is_exact_on(track) {
        format!("{command} (the claim's own tests say which step fails)")
    } else {
        format!(
            "{command} (its lines \"claim {} failed on {}\" are this track's)",
            claim.id,
            track.name()
        )
    }
}

/// The command that runs the graded tests of a chapter's track, by the
/// chapter's id: `cargo test` runs the SQLite lessons' only, and each
/// server track's tests are compiled with its feature and sit under a
/// module of their own.
pub fn tests_of(chapter: &str) -> &'static str {
    match chapter {
        "PG" => "`cargo test --features postgres postgres::`",
        "L7" => "`cargo test --features etcd l7_etcd::`",
        "L8" => "`cargo test --features postgres-sql postgres_sql::`",
        _ => "`cargo test`",
    }
}

/// Runs one lesson into `transcript`; a halt becomes the lesson's last line.
/// Returns whether the lesson ran to its end.
pub fn run_lesson(
    transcript: &Transcript,
    lesson: &Lesson,
    scenario: impl FnOnce(&Narrator) -> Result<(), Halt>,
) -> bool {
    transcript.lesson(lesson);
    let track = match lesson.id {
        "PG" => Track::Postgres,
        "L7" => Track::Etcd,
        "L8" => Track::PostgresSql,
        _ => Track::Sqlite,
    };
    match scenario(&Narrator::new(transcript, track)) {
        Ok(()) => true,
        Err(halt) => {
            transcript.note(format_args!("stopped: {halt}"));
            false
        }
    }
}

/// The whole lab, all six lessons (and the PostgreSQL chapter with the
/// feature `postgres`, the etcd chapter with the feature `etcd`), each on a
/// transcript of its own handed to `told` as soon as the lesson ends, so a
/// reader sees each lesson as it finishes. Returns whether every lesson ran
/// to its end. The etcd chapter starts its workers as processes of the
/// running program, which must call [`crate::wire`], then
/// [`crate::etcd::serve_if_worker`], first thing (`lab` does).
pub fn run_all(mut told: impl FnMut(&Transcript)) -> bool {
    let mut complete = true;
    let mut tell = |lesson: &Lesson, scenario: &dyn Fn(&Narrator) -> Result<(), Halt>| {
        let transcript = Transcript::new();
        complete &= run_lesson(&transcript, lesson, scenario);
        told(&transcript);
    };
    for (lesson, scenario) in SCENARIOS {
        tell(&lesson, &scenario);
    }
    #[cfg(feature = "postgres")]
    {
        let (lesson, scenario) = POSTGRES;
        tell(&lesson, &scenario);
    }
    #[cfg(feature = "postgres-sql")]
    {
        let (lesson, scenario) = POSTGRES_SQL;
        tell(&lesson, &scenario);
    }
    #[cfg(feature = "etcd")]
    {
        let program = || {
            std::process::Command::new(
                std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into()),
            )
        };
        tell(&etcd::LESSON, &|n| etcd::chapter(n, &program));
    }
    complete
}

/// A fresh lab for one scene.
fn lab(journal: Journal) -> Result<Lab, LabError> {
    Lab::new(journal)
}

/// L1: a worker's decision outlives its authority.
fn l1_authority_can_become_stale(n: &Narrator) -> Result<(), Halt> {
    n.note(
        "A worker checks its authority, pauses, and comes back. Meanwhile the authority moved on.",
    );
    l1::stale_worker(n, &lab(Journal::Rollback)?)?;
    n.note(
        "No pause at all: the install lands in the gap between a check and a write, however short.",
    );
    l1::install_between_check_and_write(n, &lab(Journal::Rollback)?)?;
    n.note(
        "Every order of it: two workers (each reads its generation, asks once, retries once) and the \
         authority (installs 2, also while a worker's call is paused at a checkpoint).",
    );
    for route in [Route::Apply, Route::WorkerSideCheck] {
        l1::every_interleaving(n, Setup::new(route))?;
    }
    Ok(())
}

/// L2: the destination's contract, one resource at a time.
fn l2_explicit_contract(n: &Narrator) -> Result<(), Halt> {
    n.note("Each resource has its own installed generation; only that exact number is accepted.");
    l2::resources_are_independent(n, &lab(Journal::Rollback)?)?;
    l2::invented_generation_is_never_issued(n, &lab(Journal::Rollback)?)?;
    l2::installed_generation_is_accepted(n, &lab(Journal::Rollback)?, 1, 5)?;
    l2::install_only_moves_forward(n, &lab(Journal::Rollback)?, 1)?;
    l2::unknown_resource_is_an_error(n, &lab(Journal::Rollback)?)?;
    n.note(
        "Granted is not installed: the authority must install a generation before it hands it out.",
    );
    l2::granted_is_not_installed(n, &lab(Journal::Rollback)?)
}

/// L3: the check and the effect share one transaction that holds the lock.
fn l3_decision_in_transaction(n: &Narrator) -> Result<(), Halt> {
    n.note("The destination takes the write lock before it reads the generation, and keeps it until it commits. The file is in WAL mode, where a reader never holds a writer back: only that lock keeps an install out.");
    l3::apply_meets_contention(n, &lab(Journal::Wal)?)?;
    l3::apply_holds_the_lock(n, &lab(Journal::Wal)?, Checkpoint::GenerationRead)?;
    n.note(
        "install_generation too: it takes the write lock before it reads the installed generation.",
    );
    l3::install_meets_contention(n, &lab(Journal::Wal)?)?;
    l3::install_holds_the_lock(n, &lab(Journal::Wal)?, Checkpoint::GenerationRead)?;
    n.note("The same story with the file in the rollback journal: a reader's shared lock also holds a writer's commit back, but there is still one writer.");
    l3::lock_story_in_this_journal_mode(n, &lab(Journal::Rollback)?, Journal::Rollback)
}

/// L4: the generation says who may act, not whether the act already happened.
fn l4_duplicates(n: &Narrator) -> Result<(), Halt> {
    n.note("A current holder can still send the same intent twice; the record keyed by request id remembers it.");
    l4::same_intent_twice(n, &lab(Journal::Rollback)?)?;
    l4::replay_returns_the_original(n, &lab(Journal::Rollback)?)?;
    l4::other_delta_is_a_conflict(n, &lab(Journal::Rollback)?, 9)?;
    l4::keyed_by_resource_and_id(n, &lab(Journal::Rollback)?)?;
    l4::generation_is_not_a_key(n, &lab(Journal::Rollback)?)?;
    n.note("A worker whose response was lost retries after losing authority: it learns it is stale, not the old result.");
    l4::late_retry_is_stale(n, &lab(Journal::Rollback)?)?;
    l4::replay_under_a_newer_generation(n, &lab(Journal::Rollback)?)?;
    l4::refusals_store_nothing(n, &lab(Journal::Rollback)?, l4::Refusal::Conflict)?;
    n.note("The response is lost, but the authority has not moved: the retry learns what its own request did.");
    l4::lost_response_retry_is_a_replay(n, &lab(Journal::Rollback)?)?;
    n.note("Worker A's answer is slow, so it resends r1 on a second connection while the first is still inside apply.");
    for journal in [Journal::Wal, Journal::Rollback] {
        l4::the_same_request_at_once(n, journal)?;
    }
    l4::a_resend_while_the_first_is_paused(n, &lab(Journal::Wal)?)?;
    n.note("The request id is opaque: an id that differs in any way is another request.");
    l4::ids_are_opaque(n, &lab(Journal::Rollback)?, "order-7", "Order-7")
}

/// L5: what the contract does not cover, shown rather than hidden.
fn l5_counterexamples(n: &Narrator) -> Result<(), Halt> {
    n.note("A fault between the value and the record: the local transaction rolls both back.");
    l5::fault_rolls_back(n, &lab(Journal::Rollback)?)?;
    n.note("An external call is outside the transaction: the rollback cannot take it back.");
    l5::external_call_is_not_undone(n, &lab(Journal::Rollback)?)?;
    n.note("A write that does not go through apply is not checked by it.");
    l5::direct_sql_bypasses_the_contract(n, &lab(Journal::Rollback)?)?;
    n.note("A bad recovery puts an old generation back; apply trusts whatever is installed.");
    l5::restoring_an_old_generation(n, &lab(Journal::Rollback)?)?;
    n.note("Closing every connection and opening the file again keeps what was committed. This is not a crash or power-loss test.");
    l5::reopening_keeps_what_was_committed(n, &lab(Journal::Rollback)?)
}

/// L6: anything a caller can send gets an answer that names the problem.
fn l6_bad_input(n: &Narrator) -> Result<(), Halt> {
    n.note("Bad input is refused with a typed error and leaves everything as it was.");
    let injected = "fund-A' OR '1'='1";
    for (request, error) in [
        (
            (injected, 1, "r2", 1),
            LabError::UnknownResource(injected.to_owned()),
        ),
        ((scenes::A, 1, "", 1), LabError::EmptyRequestId),
        ((scenes::A, 0, "r2", 1), LabError::GenerationBelowOne(0)),
    ] {
        l6::bad_apply_changes_nothing(n, &lab(Journal::Rollback)?, request, error)?;
    }
    l6::overflow_is_a_typed_error(n, &lab(Journal::Rollback)?, i64::MAX - 1, 2)?;
    l6::bad_install_changes_nothing(
        n,
        &lab(Journal::Rollback)?,
        scenes::A,
        0,
        LabError::GenerationBelowOne(0),
    )
}

/// The PostgreSQL chapter: the stale worker again, then what the row lock
/// changes, on a private server (see [`crate::pg`]).
#[cfg(feature = "postgres")]
fn postgres_server(n: &Narrator) -> Result<(), Halt> {
    use crate::pg::PgLab;
    use crate::scenes::pg;

    n.note("The destination is now a schema on a PostgreSQL server, reached over TCP; the code is exercises/postgres/.");
    l1::stale_worker(n, &PgLab::new()?)?;
    n.note("apply locks the resource's row (SELECT ... FOR UPDATE NOWAIT) before it reads the generation.");
    pg::one_row_is_locked(n, &PgLab::new()?)?;
    n.note("SQLite, for contrast: one connection's BEGIN IMMEDIATE is the lock on the whole file, whichever fund the next writer wants.");
    pg::sqlite_locks_the_whole_file(n, &lab(Journal::Rollback)?)?;
    n.note("Contention is immediate and typed: SQLSTATE 55P03 (lock not available), never a verdict on the generation.");
    pg::apply_meets_a_held_row(n, &PgLab::new()?)?;
    n.note(
        "The record still removes duplicates, and a direct UPDATE still goes around the contract.",
    );
    l4::replay_returns_the_original(n, &PgLab::new()?)?;
    l5::direct_sql_bypasses_the_contract(n, &PgLab::new()?)?;
    n.note("Workers in separate processes, each with its own TCP connection, are L1.4's test (tests/lab/postgres/processes.rs).");
    Ok(())
}

/// Lesson 8: the same contract written as two functions inside the
/// database, which roles may call, and what that closes and leaves open
/// (see [`crate::pg::contract`]).
#[cfg(feature = "postgres-sql")]
fn postgres_sql(n: &Narrator) -> Result<(), Halt> {
    use crate::pg::contract::SqlLab;
    use crate::scenes::l8;

    n.note("The contract now lives in the database: apply and install_generation are PL/pgSQL functions (exercises/postgres/contract.sql), each call one statement.");
    n.note("Three roles: fencing_owner owns the tables and the functions, fencing_authority may call install_generation, fencing_worker may call apply.");
    l1::stale_worker(n, &SqlLab::new()?)?;
    n.note("L5.3's direct write, now as the worker: the database itself refuses it.");
    l8::worker_cannot_write_around(n, &SqlLab::new()?)?;
    l8::only_the_authority_installs(n, &SqlLab::new()?)?;
    n.note(
        "L5.4's restore, now against a rule of the schema (a trigger), which holds whoever writes.",
    );
    l8::generation_never_goes_back(n, &SqlLab::new()?)?;
    n.note("What no role or rule closes: the tables' owner, and effects outside the database.");
    l8::what_stays_open(n, &SqlLab::new()?)?;
    n.note("Who holds the owner's login is outside the lab: a real deployment keeps it from every worker and operator's daily path.");
    n.note("Two more paths, closed only by what the file says. A function that runs with its owner's rights must not look where its caller points: a session finds its own temporary relations first, unless its search_path names pg_temp last.");
    l8::worker_cannot_redirect(n, &SqlLab::new()?)?;
    n.note("And the authority's part is installing: no apply, no write of its own.");
    l8::authority_only_installs(n, &SqlLab::new()?)?;
    Ok(())
}
