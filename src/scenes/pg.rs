//! What only the PostgreSQL server shows (feature `postgres`): a lock per
//! row. The shared scenes of the other lessons run on a
//! [`PgLab`](crate::pg::PgLab) as they are.

use super::expect::{INSTALLED, applied, contention, rec};
use super::{A, B, Observer, Paused, Stage, pause_at};
use crate::checkpoint::Checkpoint;
use crate::pg::PgLab;
use crate::transcript::Halt;
use crate::{Lab, Session, describe_error};

/// L3.1 on PostgreSQL: while another session holds fund-A's row, apply is
/// told "contention", which is not a verdict; once the row is free the same
/// request applies.
pub fn apply_meets_a_held_row(o: &dyn Observer, lab: &PgLab) -> Result<(), Halt> {
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
    let b = s.under("L3.7");
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut worker, Checkpoint::GenerationRead, move || {
        paused.say(
            "",
            format_args!("(apply on {A} paused after reading the generation)"),
        );
        probe_row(&hook_lab, &paused, A);
        let mut authority = hook_lab.connect()?;
        let installed = describe_install_line(&paused, &mut authority, A, 2);
        paused.saw(format!("install {A}: {installed}"));
        Ok(())
    });
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.while_paused(
        &worker,
        "while apply on fund-A was paused after the generation was read",
        format!("install {A}: {}", contention()),
    )?;
    // The lock is the row's: fund-B is free. (Told as L3.7, after the
    // paused call's lines.)
    let mut other = b.connect()?;
    probe_row(&b.lab, &b.paused(), B);
    b.install("authority", &mut authority, B, 2, INSTALLED)?;
    b.apply("worker B", &mut other, (B, 2, "b1", 3), applied(3))?;

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
fn probe_row(lab: &PgLab, paused: &Paused, resource: &str) {
    let probe = match lab.probe_row_lock(resource) {
        Ok(()) => "acquired the row lock".to_owned(),
        Err(error) => describe_error(&error),
    };
    paused.say(
        "probe",
        format_args!("SELECT ... FOR UPDATE NOWAIT on {resource} -> {probe}"),
    );
}

/// The authority installs from inside a hook: a line of the story, and the
/// outcome as it reads.
fn describe_install_line(
    paused: &Paused,
    authority: &mut impl Session,
    resource: &str,
    generation: i64,
) -> String {
    let installed =
        super::expect::describe_install(&authority.install_generation(resource, generation));
    paused.say(
        "authority",
        format_args!("install_generation({resource}, {generation}) -> {installed}"),
    );
    installed
}
