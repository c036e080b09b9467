//! L3: the decision is applied inside the transaction. The scenes run on a
//! SQLite lab in the journal mode it was made with; the two about a
//! decision carried between transactions run on either destination.

use std::cell::Cell;
use std::rc::Rc;

use super::expect::{
    INSTALLED, applied, contention, describe_install, locked_out, not_higher, rec, stale,
};
use super::{A, Observer, Stage, install_while_paused, pause_at, probe_and_install, try_apply};
use crate::checkpoint::Checkpoint;
use crate::claims::hints::BETWEEN_TRANSACTIONS;
use crate::transcript::Halt;
use crate::{Lab, Session, Store, describe};

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

/// L3.2: the decision is made in the transaction that writes. An apply
/// that ends one transaction and begins another in the same call pauses
/// between them ([`Checkpoint::TransactionEnded`]), where nothing holds the
/// lock, and the authority installs generation 2 there. What the apply may
/// answer follows from what the file held at that moment: if its effect
/// had not been written, it was decided after the install and must be
/// refused as stale, writing nothing; if it had been, it was applied under
/// generation 1 before the install, and says so. An apply that runs in one
/// transaction never pauses there; it is applied, and the install lands
/// after it. Either way the answer is judged with the file, never by which
/// statements ran.
pub fn apply_decides_where_it_writes<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.2", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    // The value the file held when the call paused between transactions.
    let at_pause = Rc::new(Cell::new(None));
    let (hook_lab, paused, seen) = (s.lab.clone(), s.paused(), Rc::clone(&at_pause));
    pause_at(&mut worker, Checkpoint::TransactionEnded, move || {
        seen.set(Some(hook_lab.state(A)?.value));
        paused.say(
            "",
            format_args!("(apply paused {})", Checkpoint::TransactionEnded),
        );
        install_while_paused(&hook_lab, &paused, A, 2);
        Ok(())
    });
    let step = format!("apply({A}, generation 1, \"r1\", +5)");
    let got = describe(&worker.apply(A, 1, "r1", 5));
    let Some(value) = at_pause.get() else {
        // One transaction: nothing came between its check and its write.
        s.same(step, applied(5), got)?;
        s.install("authority", &mut authority, A, 2, INSTALLED)?;
        return s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)]);
    };
    s.while_paused(
        &worker,
        "while apply was paused between two of its transactions",
        format!("install: {INSTALLED}"),
    )?;
    let step = format!("{step}, {BETWEEN_TRANSACTIONS} and generation 2 was installed");
    if value == 0 {
        // Nothing written before the install: decided after it.
        s.same(step, stale(1, 2), got)?;
        s.observe(A, 2, 0, &[])
    } else {
        s.same(step, applied(5), got)?;
        s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)])
    }
}

/// L3.3: the same for install_generation. Paused between two of its
/// transactions, it meets a higher install (3) made meanwhile. Asked for 2,
/// it must be refused as not higher unless 2 was installed before the
/// pause; 3 stays either way. One transaction never pauses there: it
/// installs 2, then 3 lands.
pub fn install_decides_where_it_writes<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.3", lab);
    let (mut authority, mut other) = (s.connect()?, s.connect()?);

    // The generation the file held when the call paused between
    // transactions.
    let at_pause = Rc::new(Cell::new(None));
    let (hook_lab, paused, seen) = (s.lab.clone(), s.paused(), Rc::clone(&at_pause));
    pause_at(&mut authority, Checkpoint::TransactionEnded, move || {
        seen.set(Some(hook_lab.state(A)?.generation));
        paused.say(
            "",
            format_args!(
                "(install_generation paused {})",
                Checkpoint::TransactionEnded
            ),
        );
        install_while_paused(&hook_lab, &paused, A, 3);
        Ok(())
    });
    let step = format!("install_generation({A}, 2)");
    let got = describe_install(&authority.install_generation(A, 2));
    let Some(generation) = at_pause.get() else {
        s.same(step, INSTALLED, got)?;
        s.install("other authority", &mut other, A, 3, INSTALLED)?;
        return s.state(A, 3, 0);
    };
    s.while_paused(
        &authority,
        "while install_generation was paused between two of its transactions",
        format!("install: {INSTALLED}"),
    )?;
    let step = format!("{step}, {BETWEEN_TRANSACTIONS} and generation 3 was installed");
    match generation {
        2 => s.same(step, INSTALLED, got)?,
        _ => s.same(step, not_higher(2, 3), got)?,
    }
    s.state(A, 3, 0)
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
