//! L3: the decision is applied inside the transaction. The scenes run on a
//! SQLite lab in the journal mode it was made with; the two about a
//! decision carried between transactions run on either destination.

use std::cell::Cell;
use std::rc::Rc;

use super::expect::{
    INSTALLED, answer, applied, contention, describe_install, install_answer, let_in, list,
    locked_out, not_higher, rec, stale,
};
use super::{
    A, Observer, Stage, Step, install_while_paused, pause_at, probe_and_install, try_apply,
};
use crate::checkpoint::Checkpoint;
use crate::claims::facts::words::{INSTALL_GOT_IN, TRANSACTION_ENDED};
use crate::claims::facts::{Observed, Pause};
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
/// before its effect), the authority tries to install generation 2 on
/// another connection. Apply holds the write lock, so the install meets
/// contention and apply is applied; the install lands after apply commits.
/// If the install gets in, the pause fell in a look taken before the
/// decisive check (an early look outside the lock, say): that check must
/// then see generation 2 and refuse as stale, writing nothing. A DEFERRED
/// transaction in WAL mode, or a generation read before BEGIN, lets the
/// install in and goes on with what it read, and fails here. (Paused
/// inside a write, every transaction holds the lock: the write statement
/// took it.) Whether a plain BEGIN IMMEDIATE could start meanwhile is told,
/// not judged.
pub fn apply_holds_the_lock(o: &dyn Observer, lab: &Lab, pause: Checkpoint) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.2", lab);
    s.say(
        "observer",
        format_args!("journal mode: {}", s.lab.journal_mode_in_file()?),
    );
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);
    s.name(&worker, "worker A");

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut worker, pause, move || {
        paused.say("", format_args!("(apply paused {pause})"));
        probe_and_install(&hook_lab, &paused, A, 2)
    });
    if apply_let_an_install_in(&s, &mut worker, pause)? {
        return s.observe(A, 2, 0, &[]);
    }

    // The apply committed under generation 1; now the install may land.
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.observe(A, 2, 5, &[rec(A, "r1", 5, 5, 1)])
}

/// Apply (fund-A, generation 1, "r1", +5) on `worker`, whose hook tries an
/// install of generation 2 at `pause`, then what its pause saw: whether
/// the install got in (then apply must be refused as stale) or met the
/// lock (then apply must be applied).
fn apply_let_an_install_in(
    s: &Stage<Lab>,
    worker: &mut impl Session,
    pause: Checkpoint,
) -> Result<bool, Halt> {
    let result = worker.apply(A, 1, "r1", 5);
    let (got, answer) = (describe(&result), Observed::Answer(answer(&result)));
    let landed = s.paused.has_seen(&let_in());
    let step = "apply(fund-A, generation 1, \"r1\", +5)".to_owned();
    if landed {
        let step = format!("{step}, paused {pause} {INSTALL_GOT_IN}");
        let step = Step::compared(step, stale(1, 2), got).got(answer);
        s.told("worker A", worker, step.at(Pause::InstallGotIn))?;
    } else {
        s.told(
            "worker A",
            worker,
            Step::compared(step, applied(5), got).got(answer),
        )?;
    }
    let while_paused = format!("while apply was paused {pause}");
    if landed {
        s.say(
            "",
            "(the install got in: the pause fell before the check that decided)",
        );
        s.while_paused(worker, while_paused, let_in())?;
    } else {
        s.while_paused(worker, while_paused, locked_out())?;
    }
    Ok(landed)
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
    s.name(&worker, "worker A");

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
    let result = worker.apply(A, 1, "r1", 5);
    let (got, answer) = (describe(&result), Observed::Answer(answer(&result)));
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
    let step = format!("{step}, paused {TRANSACTION_ENDED} and generation 2 was installed");
    let step = |expected: String| {
        Step::compared(&step, expected, &got)
            .got(answer.clone())
            .at(Pause::BetweenTransactions)
    };
    if value == 0 {
        // Nothing written before the install: decided after it.
        s.report(step(stale(1, 2)))?;
        s.observe(A, 2, 0, &[])
    } else {
        s.report(step(applied(5)))?;
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
    s.name(&authority, "authority");

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
    let result = authority.install_generation(A, 2);
    let (got, answer) = (
        describe_install(&result),
        Observed::Answer(install_answer(&result)),
    );
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
    let step = format!("{step}, paused {TRANSACTION_ENDED} and generation 3 was installed");
    let expected = match generation {
        2 => INSTALLED.to_owned(),
        _ => not_higher(2, 3),
    };
    s.report(
        Step::compared(step, expected, got)
            .got(answer)
            .at(Pause::BetweenTransactions),
    )?;
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
/// writing the new one, install_generation holds the write lock: another
/// install and an apply, each on a connection of its own, meet contention.
/// If the other install gets in (the pause fell in a look taken before
/// the decisive check), the apply under generation 1 must be stale and
/// the paused install must then be refused as not higher than 3. A
/// DEFERRED transaction in WAL mode lets the install in and goes on with
/// what it read, and fails here. (Paused inside its write, any transaction
/// holds the lock: the write statement took it.)
pub fn install_holds_the_lock(o: &dyn Observer, lab: &Lab, pause: Checkpoint) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.3", lab);
    let mut authority = s.connect()?;
    s.name(&authority, "authority");

    let (hook_lab, paused) = (s.lab.clone(), s.paused());
    pause_at(&mut authority, pause, move || {
        paused.say("", format_args!("(install_generation paused {pause})"));
        probe_and_install(&hook_lab, &paused, A, 3)?;
        try_apply(&hook_lab, &paused, "worker A", (A, 1, "r1", 5));
        Ok(())
    });
    let result = authority.install_generation(A, 2);
    let (got, answer) = (
        describe_install(&result),
        Observed::Answer(install_answer(&result)),
    );
    let landed = s.paused.has_seen(&let_in());
    let step = "install_generation(fund-A, 2)".to_owned();
    let while_paused = format!("while install_generation was paused {pause}");
    if landed {
        let step = format!("{step}, paused {pause} {INSTALL_GOT_IN}");
        let step = Step::compared(step, not_higher(2, 3), got).got(answer);
        s.told("authority", &authority, step.at(Pause::InstallGotIn))?;
        s.say(
            "",
            "(the install got in: the pause fell before the check that decided)",
        );
        s.while_paused(
            &authority,
            while_paused,
            format!("{}; apply: {}", let_in(), stale(1, 3)),
        )?;
        return s.observe(A, 3, 0, &[]);
    }
    s.told(
        "authority",
        &authority,
        Step::compared(step, INSTALLED, got).got(answer),
    )?;
    s.while_paused(
        &authority,
        while_paused,
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
    if apply_let_an_install_in(&s, &mut worker, Checkpoint::GenerationRead)? {
        return s.state(A, 2, 0);
    }
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker A", &mut worker, (A, 1, "r2", 5), stale(1, 2))?;
    s.tell_state(A)?;
    s.state(A, 2, 5)
}

/// The two requests of [`two_requests_at_once`]: who, its delta.
const TWO: [(&str, i64); 2] = [("r1", 5), ("r2", 10)];

/// The most checkpoints one request is paused at, to bound a wrong
/// implementation that keeps reaching them.
const MOST_PAUSES: usize = 16;

/// L3.8: two different requests on one resource at once. Each in turn is
/// paused at each of its checkpoints (every read, write and transaction end
/// it reaches, one schedule each) while the other runs to its end on a
/// connection of its own. Contention is an answer that judged nothing: the
/// request that met it is sent again once the other returned. Then both
/// answers must fit one serial order (the first to apply sees the value
/// before, the second sees the first's effect), the value must have moved
/// by the sum of the accepted deltas, and each accepted request must have
/// its record. Judged by the answers and the file, never by the route.
pub fn two_requests_at_once<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L3.8", lab);
    let mut schedule = 0;
    for paused_one in [0, 1] {
        let runner = 1 - paused_one;
        for at in 1..=MOST_PAUSES {
            schedule += 1;
            let ids = TWO.map(|(id, _)| format!("{id}-{schedule}"));
            let before = s.lab.state(A)?.value;
            let Some((checkpoint, answers)) = one_paused(&s, &ids, paused_one, at, before)? else {
                break;
            };
            let got = both_answered(&s, &ids, &answers)?;
            let expected = [serial(before, &ids, 0), serial(before, &ids, 1)]
                .into_iter()
                .find(|order| *order == got)
                .unwrap_or_else(|| {
                    let first = serial(before, &ids, paused_one);
                    format!("{first} (or {} first)", ids[runner])
                });
            let step = format!(
                "{} paused {checkpoint} (its checkpoint {at}) while {} ran to its end",
                ids[paused_one], ids[runner]
            );
            let step = Step::compared(step, expected, got).at(Pause::OtherRanToEnd);
            s.report(if checkpoint == Checkpoint::TransactionEnded {
                step.at(Pause::BetweenTransactions)
            } else {
                step
            })?;
        }
    }
    Ok(())
}

/// One schedule of L3.8: request `paused_one` paused at its checkpoint
/// `at` while the other runs to its end, each sent again if it met
/// contention. Returns where it paused and both answers, or `None` when it
/// reached fewer checkpoints than `at` (then it was judged alone).
fn one_paused<S: Store>(
    s: &Stage<'_, S>,
    ids: &[String; 2],
    paused_one: usize,
    at: usize,
    before: i64,
) -> Result<Option<(Checkpoint, [String; 2])>, Halt> {
    let runner = 1 - paused_one;
    let (mut held, mut other) = (s.connect()?, s.connect()?);
    s.name(&held, &format!("{}'s worker", ids[paused_one]));
    s.name(&other, &format!("{}'s worker", ids[runner]));
    // What the runner answered, and where the paused one was.
    let ran: Rc<Cell<Option<String>>> = Rc::default();
    let where_paused: Rc<Cell<Option<Checkpoint>>> = Rc::default();
    {
        let (ran, where_paused) = (Rc::clone(&ran), Rc::clone(&where_paused));
        let (runner_id, runner_delta) = (ids[runner].clone(), TWO[runner].1);
        let mut reached = 0;
        let mut other = Some(other);
        held.on_checkpoint(move |checkpoint| {
            if checkpoint == Checkpoint::CallStarted {
                return Ok(());
            }
            reached += 1;
            if reached == at {
                if let Some(mut other) = other.take() {
                    where_paused.set(Some(checkpoint));
                    let answer = other.apply(A, 1, &runner_id, runner_delta);
                    ran.set(Some(describe(&answer)));
                }
            }
            Ok(())
        });
    }
    let mut paused_answer = held.apply(A, 1, &ids[paused_one], TWO[paused_one].1);
    held.clear_checkpoint();
    let Some(checkpoint) = where_paused.get() else {
        // It reached fewer checkpoints than `at`: every one was tried.
        s.same(
            format!("{} alone, past its last checkpoint", ids[paused_one]),
            applied(before + TWO[paused_one].1),
            describe(&paused_answer),
        )?;
        return Ok(None);
    };
    // Contention judged nothing: each request that met it goes again.
    let mut runner_answer = ran.take().unwrap_or_default();
    if runner_answer == contention() {
        other = s.connect()?;
        runner_answer = describe(&other.apply(A, 1, &ids[runner], TWO[runner].1));
    }
    if matches!(paused_answer, Err(crate::LabError::Contention)) {
        paused_answer = held.apply(A, 1, &ids[paused_one], TWO[paused_one].1);
    }
    let mut answers = [String::new(), String::new()];
    answers[paused_one] = describe(&paused_answer);
    answers[runner] = runner_answer;
    Ok(Some((checkpoint, answers)))
}

/// What L3.8 saw once both requests returned: their answers, the value and
/// their records.
fn both_answered<S: Store>(
    s: &Stage<'_, S>,
    ids: &[String; 2],
    answers: &[String; 2],
) -> Result<String, Halt> {
    let after = s.lab.state(A)?.value;
    let records: Vec<String> = s
        .lab
        .records(A)?
        .iter()
        .filter(|record| ids.contains(&record.request_id))
        .map(ToString::to_string)
        .collect();
    Ok(format!(
        "{} -> {}; {} -> {}; value {after}; records: {}",
        ids[0],
        answers[0],
        ids[1],
        answers[1],
        list(&records)
    ))
}

/// What L3.8 sees when request `first` applies first, then the other: the
/// form of [`both_answered`].
fn serial(before: i64, ids: &[String; 2], first: usize) -> String {
    let second = 1 - first;
    let (one, both) = (before + TWO[first].1, before + TWO[0].1 + TWO[1].1);
    let mut results = [0; 2];
    results[first] = one;
    results[second] = both;
    format!(
        "{} -> {}; {} -> {}; value {both}; records: {}",
        ids[0],
        applied(results[0]),
        ids[1],
        applied(results[1]),
        list(&[
            rec(A, &ids[0], TWO[0].1, results[0], 1),
            rec(A, &ids[1], TWO[1].1, results[1], 1),
        ])
    )
}
