//! What only the PostgreSQL server shows (feature `postgres`): a lock per
//! row. The shared scenes of the other lessons run on a
//! [`PgLab`] as they are.

use super::expect::{INSTALLED, applied, contention, rec};
use std::cell::RefCell;
use std::rc::Rc;

use super::{A, B, Observer, Paused, Stage, pause_at};
use crate::checkpoint::Checkpoint;
use crate::pg::{PgLab, RowLocks};
use crate::transcript::Halt;
use crate::{Lab, Session, describe, describe_error};

/// L3.1 on PostgreSQL: while another session holds fund-A's row, apply is
/// told "contention", which is not a verdict; once the row is free the same
/// request applies.
pub fn apply_meets_a_held_row<L: RowLocks>(o: &dyn Observer, lab: &L) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.1", lab);
    let mut worker = s.connect()?;

    let holder = s.lab.hold_row_lock(A)?;
    s.say(
        "other",
        format_args!("SELECT ... FOR UPDATE on {A} (holds its row)"),
    );
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), contention())?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    s.state(A, 1, 0)?;
    s.records(A, &[])?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.tell_state(A)?;
    s.state(A, 1, 5)
}

/// L3.2 and L3.7 on PostgreSQL, as the story tells them: apply on fund-A is
/// paused right after it read the generation. The authority's install on
/// fund-A meets contention; fund-B's row is free, so an install and an
/// apply on it go through. Once apply commits, fund-A's install lands. (The
/// graded tests check more pauses and what the server says about each
/// transaction, `tests/lab/postgres/row_locks.rs`.)
///
/// Whether another session may lock fund-A's row itself is told, not
/// checked: an advisory lock that both functions take keeps out the same
/// installs and passes the claims.
pub fn one_row_is_locked(o: &dyn Observer, lab: &PgLab) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.2", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    // What fund-B's install and apply answered while fund-A was paused.
    let on_b: Rc<RefCell<Vec<String>>> = Rc::default();
    let (hook_lab, paused, hook_on_b) = (s.lab.clone(), s.paused(), Rc::clone(&on_b));
    pause_at(&mut worker, Checkpoint::GenerationRead, move || {
        paused.say(
            "",
            format_args!("(apply on {A} paused after reading the generation)"),
        );
        probe_row(&hook_lab, &paused, None, A);
        let mut authority = hook_lab.connect()?;
        let installed = install_told(&paused, None, &mut authority, A, 2);
        paused.saw(format!("install {A}: {installed}"));
        // The lock is the row's: fund-B is free.
        probe_row(&hook_lab, &paused, Some("L3.7"), B);
        let installed = install_told(&paused, Some("L3.7"), &mut authority, B, 2);
        let mut other = hook_lab.connect()?;
        let applied = describe(&other.apply(B, 2, "b1", 3));
        paused.say_under(
            "L3.7",
            "worker B",
            format_args!("apply({B}, generation 2, \"b1\", +3) -> {applied}"),
        );
        hook_on_b.borrow_mut().extend([
            format!("install {B}: {installed}"),
            format!("apply {B}: {applied}"),
        ]);
        Ok(())
    });
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    let pause = "while apply on fund-A was paused after the generation was read";
    s.while_paused(&worker, pause, format!("install {A}: {}", contention()))?;
    s.under("L3.7").same(
        pause,
        format!("install {B}: {INSTALLED}; apply {B}: {}", applied(3)),
        on_b.borrow().join("; "),
    )?;

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)])?;
    s.observe(B, 2, 3, &[rec(B, "b1", 3, 3, 2)])
}

/// L3.7 on SQLite, for contrast: one connection's BEGIN IMMEDIATE locks the
/// whole file, whichever fund the next writer wants. Told, not checked: no
/// code of the learner's runs here.
pub fn sqlite_locks_the_whole_file(o: &dyn Observer, lab: &Lab) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.7", lab);
    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (to change fund-A)");
    let paused = s.paused();
    super::probe(&s.lab, &paused);
    s.flush();
    holder.release()?;
    Ok(())
}

/// `SELECT ... FOR UPDATE NOWAIT` on a session of its own: is `resource`'s
/// row free right now? A line of the story.
fn probe_row(lab: &PgLab, paused: &Paused, claim: Option<&'static str>, resource: &str) {
    let probe = match lab.probe_row_lock(resource) {
        Ok(()) => "acquired the row lock".to_owned(),
        Err(error) => describe_error(&error),
    };
    say(
        paused,
        claim,
        "probe",
        format_args!("SELECT ... FOR UPDATE NOWAIT on {resource} -> {probe}"),
    );
}

/// A line from a hook, under the scene's claim or `claim`.
fn say(paused: &Paused, claim: Option<&'static str>, role: &str, text: impl std::fmt::Display) {
    match claim {
        Some(claim) => paused.say_under(claim, role, text),
        None => paused.say(role, text),
    }
}

/// The authority installs from inside a hook: a line of the story, and the
/// outcome as it reads.
fn install_told(
    paused: &Paused,
    claim: Option<&'static str>,
    authority: &mut impl Session,
    resource: &str,
    generation: i64,
) -> String {
    let installed =
        super::expect::describe_install(&authority.install_generation(resource, generation));
    say(
        paused,
        claim,
        "authority",
        format_args!("install_generation({resource}, {generation}) -> {installed}"),
    );
    installed
}
