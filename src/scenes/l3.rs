//! L3: the decision is applied inside the transaction. The scenes run on a
//! SQLite lab in the journal mode it was made with.

use super::expect::{INSTALLED, applied, contention, locked_out, rec, stale};
use super::{A, Observer, Stage, pause_at, probe_and_install, try_apply};
use crate::Lab;
use crate::checkpoint::Checkpoint;
use crate::transcript::Halt;

/// L3.1: while another connection holds the write lock, apply is told
/// "contention", which is not a verdict on its generation; once the lock is
/// released the same request goes through.
pub fn apply_meets_contention(o: &dyn Observer, lab: &Lab) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.1", lab);
    let mut worker = s.connect()?;

    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (holds the write lock)");
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), contention())?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    s.state(A, 1, 0)?;
    s.records(A, &[])?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.state(A, 1, 5)
}

/// L3.2: paused at `pause` (right after it read the generation, or right
/// before its effect), apply still holds the write lock: a plain BEGIN
/// IMMEDIATE and an install on other connections are both refused. After
/// apply commits, the install goes through. A DEFERRED transaction, or a
/// generation read before BEGIN, holds no write lock right after its read
/// and fails here. (Paused inside a write, every transaction holds the
/// lock: the write statement took it.)
pub fn apply_holds_the_lock(o: &dyn Observer, lab: &Lab, pause: Checkpoint) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.2", lab);
    s.say(
        "observer",
        format_args!("journal mode: {}", s.lab.journal_mode_in_file()?),
    );
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut worker, pause, move || {
        paused.say("", format_args!("(apply paused {pause})"));
        probe_and_install(&hook_lab, &paused, A, 2)
    });
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.while_paused(
        &worker,
        format_args!("while apply was paused {pause}"),
        locked_out(),
    )?;

    // The apply committed under generation 1; now the install may land.
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// L3.3: install_generation meets a held write lock as contention, like
/// apply.
pub fn install_meets_contention(o: &dyn Observer, lab: &Lab) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.3", lab);
    let mut authority = s.connect()?;

    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (holds the write lock)");
    s.install("authority", &mut authority, A, 2, contention())?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");
    s.state(A, 1, 0)?;

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.state(A, 2, 0)
}

/// L3.3: paused at `pause`, between reading the installed generation and
/// writing the new one, install_generation holds the write lock: no apply,
/// no other install, no plain BEGIN IMMEDIATE gets in. Paused right after
/// its read, a DEFERRED transaction holds no write lock yet and fails here.
/// (Paused inside its write, any transaction holds the lock: the write
/// statement took it.)
pub fn install_holds_the_lock(o: &dyn Observer, lab: &Lab, pause: Checkpoint) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.3", lab);
    let mut authority = s.connect()?;

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut authority, pause, move || {
        paused.say("", format_args!("(install_generation paused {pause})"));
        probe_and_install(&hook_lab, &paused, A, 3)?;
        try_apply(&hook_lab, &paused, "worker A", (A, 1, "r1", 5));
        Ok(())
    });
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.while_paused(
        &authority,
        format_args!("while install_generation was paused {pause}"),
        format!("{}; apply: {}", locked_out(), contention()),
    )?;
    s.observe(A, 2, 0, &[])
}

/// L3.4: the whole lock story, in the lab's journal mode, with the file
/// really in that mode: contention while another writer holds the lock,
/// then apply paused after its generation read keeps the lock, then the
/// install lands after.
pub fn lock_story_in_this_journal_mode(
    o: &dyn Observer,
    lab: &Lab,
    journal: crate::Journal,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.4", lab);
    let mode = s.lab.journal_mode_in_file()?;
    s.say("observer", format_args!("journal mode: {mode}"));
    s.same("PRAGMA journal_mode", journal.sqlite_name(), &mode)?;
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    let holder = s.lab.hold_write_lock()?;
    s.say("other", "BEGIN IMMEDIATE (holds the write lock)");
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), contention())?;
    s.install("authority", &mut authority, A, 2, contention())?;
    holder.release()?;
    s.say("other", "ROLLBACK (releases it)");

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut worker, Checkpoint::GenerationRead, move || {
        paused.say(
            "",
            format_args!("(apply paused {})", Checkpoint::GenerationRead),
        );
        probe_and_install(&hook_lab, &paused, A, 2)
    });
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.while_paused(
        &worker,
        "while apply was paused after its generation read",
        locked_out(),
    )?;
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 5), stale(1, 2))?;
    s.tell_state(A)?;
    s.state(A, 2, 5)
}
