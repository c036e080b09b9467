//! L3 on PostgreSQL: judged by what the lock keeps out. No install lands
//! between apply's check of the generation and its effect, nor between
//! install_generation's read and its write; the check and the write are one
//! transaction, as the server names it; a call that meets another's lock
//! neither reads nor writes until it is free. The reference locks the
//! resource's row; an advisory lock per resource that both functions take
//! keeps out the same, and passes. Another session meets either as
//! contention, at once; the other resource stays free (L3.7).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use fencing_lab::pg::{Call, RowLocks};
use fencing_lab::scenes::pause_at;
use fencing_lab::{Checkpoint, LabError, Session, describe, describe_error};
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// While paused: may another session lock `resource`'s row? May the
/// authority install on it? Both outcomes go to `seen`.
fn probe_and_install(
    lab: &Lab,
    seen: &Seen,
    resource: &str,
    generation: i64,
) -> Result<(), LabError> {
    seen.push(probe(lab, resource));
    let install = lab.connect()?.install_generation(resource, generation);
    seen.push(format!(
        "install {resource}: {}",
        describe_install(&install)
    ));
    Ok(())
}

/// May another session lock `resource`'s row right now? As "probe …: …".
fn probe(lab: &Lab, resource: &str) -> String {
    let got = match lab.probe_row_lock(resource) {
        Ok(()) => "acquired the row lock".to_owned(),
        Err(error) => describe_error(&error),
    };
    format!("probe {resource}: {got}")
}

/// While another session holds fund-A's row, apply is told "contention",
/// which is not a verdict; once the row is free the same request applies.
/// (The story's scene, `src/scenes/pg.rs`.)
#[rstest]
fn l3_1_apply_fails_as_contention_while_another_session_holds_the_row(lab: Lab) {
    let c = claim("L3.1");
    c.run(fencing_lab::scenes::pg::apply_meets_a_held_row(&c, &lab));
}

/// While install_generation is paused inside its write of generation 2,
/// holding whatever lock the learner's install takes, a worker on another
/// session applies under generation 1. It must meet contention. If it reads
/// meanwhile (an early check of its own, or a read made without the lock),
/// the test lets the install commit and the worker go on: whatever the lock
/// timeout, it must then end as contention or stale, never applied under
/// the generation it read while the install was in flight. Code that goes
/// on without its lock when the lock is taken (`SKIP LOCKED`, a lock error
/// swallowed), which the 1 ms lock timeout would turn into contention at
/// its write, writes here.
#[rstest]
fn l3_1_apply_acts_on_nothing_it_read_while_an_install_was_in_flight(lab: Lab) {
    let c = claim("L3.1");
    let mut authority = lab.connect().unwrap();

    let in_flight: Rc<RefCell<Option<InFlight>>> = Rc::default();
    let (hook_lab, hook_in_flight) = (lab.clone(), Rc::clone(&in_flight));
    pause_at(&mut authority, Checkpoint::BeforeInstall, move || {
        *hook_in_flight.borrow_mut() = Some(InFlight::apply(&hook_lab, (A, 1, "r1", 5)));
        Ok(())
    });
    c.install(&mut authority, A, 2, INSTALLED);
    let Some(worker) = in_flight.borrow_mut().take() else {
        c.fail(
            "install_generation(fund-A, 2)",
            format!("paused {}", Checkpoint::BeforeInstall),
            "it returned without writing the generation",
        )
    };
    let step = "apply(fund-A, generation 1, \"r1\", +5) on another session, while install_generation was paused before its write";
    match worker.finish() {
        (None, returned) => c.same(step, contention(), returned),
        (Some(read), returned) => {
            if returned != contention() && returned != stale(1, 2) {
                c.fail(
                    step,
                    format!(
                        "{} (or, having read while the install was in flight, {} once it committed)",
                        contention(),
                        stale(1, 2)
                    ),
                    format!(
                        "it reached the checkpoint {read} while the install was in flight; let go once the install committed, it returned {returned}"
                    ),
                );
            }
        }
    }
    c.state(&lab, A, 2, 0);
    c.records(&lab, A, &[]);
}

/// How long an [`InFlight`] worker may take to return or reach a
/// checkpoint, as long as the checkpoint protocol waits for a paused
/// session.
const STUCK: Duration = Duration::from_secs(60);

/// An apply started on a thread of its own while the test holds another
/// call paused: it runs until it returns or reaches a read or write
/// checkpoint, where it waits until [`InFlight::finish`].
struct InFlight {
    /// What the worker's thread reports.
    events: mpsc::Receiver<Event>,
    /// Lets a worker paused at a checkpoint go on.
    go: mpsc::Sender<()>,
    /// The worker's thread.
    thread: thread::JoinHandle<()>,
    /// Where it is paused, or what it returned without pausing.
    first: Event,
}

/// What an [`InFlight`] worker's thread reports.
enum Event {
    /// It reached a checkpoint and waits there.
    Reached(Checkpoint),
    /// Its apply returned this.
    Returned(String),
}

impl InFlight {
    /// Starts `request` on a new session of `lab`, and returns once it has
    /// returned or is paused at its first read or write checkpoint.
    fn apply(lab: &Lab, request: (&'static str, i64, &'static str, i64)) -> InFlight {
        let (report, events) = mpsc::channel();
        let (go, wait) = mpsc::channel::<()>();
        let lab = lab.clone();
        let thread = thread::spawn(move || {
            let returned = report.clone();
            let (resource, generation, request_id, delta) = request;
            let result = lab.connect().and_then(|mut worker| {
                let mut first = true;
                worker.on_checkpoint(move |checkpoint| {
                    if checkpoint != Checkpoint::CallStarted && std::mem::take(&mut first) {
                        let _ = report.send(Event::Reached(checkpoint));
                        let _ = wait.recv();
                    }
                    Ok(())
                });
                worker.apply(resource, generation, request_id, delta)
            });
            let _ = returned.send(Event::Returned(describe(&result)));
        });
        let mut in_flight = InFlight {
            events,
            go,
            thread,
            first: Event::Returned(String::new()),
        };
        in_flight.first = in_flight.next();
        in_flight
    }

    /// The worker's next report; a thread that ended without one panicked.
    /// Bounded like every wait of the checkpoint protocol: an apply that
    /// waits for a lock longer than the session's 1 ms (a lock timeout of
    /// its own) is reported, not waited for.
    fn next(&self) -> Event {
        match self.events.recv_timeout(STUCK) {
            Ok(event) => event,
            Err(mpsc::RecvTimeoutError::Disconnected) => Event::Returned("a panic".to_owned()),
            Err(mpsc::RecvTimeoutError::Timeout) => Event::Returned(format!(
                "nothing: it neither returned nor reached a checkpoint in {} s",
                STUCK.as_secs()
            )),
        }
    }

    /// Lets the worker go on and waits for it: the checkpoint it was
    /// paused at, if any, and what its apply returned.
    fn finish(self) -> (Option<Checkpoint>, String) {
        let done = match self.first {
            Event::Returned(result) => (None, result),
            Event::Reached(checkpoint) => {
                let _ = self.go.send(());
                loop {
                    match self.next() {
                        Event::Returned(result) => break (Some(checkpoint), result),
                        Event::Reached(_) => continue,
                    }
                }
            }
        };
        let _ = self.thread.join();
        done
    }
}

/// Which transaction the session `pid` was in at each checkpoint it
/// reached, as the server names it.
#[derive(Clone, Default)]
struct Transactions(Rc<RefCell<Vec<(Checkpoint, String)>>>);

impl Transactions {
    /// Notes the transaction `pid` is in at `checkpoint`.
    fn note(&self, lab: &Lab, pid: i32, checkpoint: Checkpoint) {
        let transaction = match lab.transaction_of(pid) {
            Ok(Some(transaction)) => transaction,
            Ok(None) => "no transaction".to_owned(),
            Err(error) => describe_error(&error),
        };
        self.0.borrow_mut().push((checkpoint, transaction));
    }

    /// Whether the first `write` fell in a transaction in which the
    /// generation was read (before the write, or by the write itself): the
    /// check and its write are one transaction. `Err` says where each fell.
    fn write_checked(&self, write: Checkpoint) -> Result<(), String> {
        let noted = self.0.borrow();
        let Some((_, written)) = noted.iter().find(|(checkpoint, _)| *checkpoint == write) else {
            return Ok(());
        };
        let reads: Vec<&str> = noted
            .iter()
            .filter(|(checkpoint, _)| *checkpoint == Checkpoint::GenerationRead)
            .map(|(_, transaction)| transaction.as_str())
            .collect();
        if reads.contains(&written.as_str()) {
            return Ok(());
        }
        Err(format!(
            "the generation read in {}; {write} in transaction {written}",
            match reads.as_slice() {
                [] => "no transaction".to_owned(),
                reads => format!("transaction {}", reads.join(", ")),
            }
        ))
    }
}

/// What must not happen is an install landing between apply's check of
/// the generation and its effect. Apply is paused right after it read the
/// generation, or right before its effect, and the authority, on another
/// session, tries to install 2 with the learner's install_generation: it
/// must meet contention, whatever lock keeps it out (a row lock, or an
/// advisory lock per resource that install_generation takes too). If it
/// lands (the pause fell in a check made before the decisive one), apply
/// must end stale. And the database must show the check and the effect in
/// one transaction: the generation read in the transaction that writes the
/// value. A plain read without a lock, a lock taken after the read, or the
/// check committed before the effect's transaction, fails here.
#[rstest]
#[case::after_generation_read(Checkpoint::GenerationRead)]
#[case::before_effect(Checkpoint::BeforeEffect)]
fn l3_2_no_install_lands_between_apply_checking_the_generation_and_its_effect(
    lab: Lab,
    #[case] pause: Checkpoint,
) {
    let c = claim("L3.2");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());
    let pid = Lab::backend_pid(&mut worker, Call::Apply).unwrap();

    let seen = Seen::default();
    let transactions = Transactions::default();
    let (hook_lab, hook_seen, hook_transactions) =
        (lab.clone(), seen.clone(), transactions.clone());
    let mut tried = false;
    worker.on_checkpoint(move |checkpoint| {
        if matches!(
            checkpoint,
            Checkpoint::GenerationRead | Checkpoint::BeforeEffect
        ) {
            hook_transactions.note(&hook_lab, pid, checkpoint);
        }
        if checkpoint == pause && !std::mem::replace(&mut tried, true) {
            let install = hook_lab.connect()?.install_generation(A, 2);
            hook_seen.push(format!("install {A}: {}", describe_install(&install)));
        }
        Ok(())
    });
    let result = describe(&worker.apply(A, 1, "r1", 5));
    let refused = format!("install {A}: {}; apply: {}", contention(), applied(5));
    let landed = format!("install {A}: {INSTALLED}; apply: {}", stale(1, 2));
    let got = format!("{}; apply: {result}", seen.lines());
    c.while_paused(
        &worker,
        format_args!(
            "apply(fund-A, generation 1, \"r1\", +5), paused {pause} while the authority installs 2"
        ),
        if got == landed { &landed } else { &refused },
        got.as_str(),
    );
    if let Err(got) = transactions.write_checked(Checkpoint::BeforeEffect) {
        c.fail(
            "the transactions apply's checkpoints fell in, as the server names them",
            "the generation read in the transaction that writes the effect",
            got,
        );
    }

    if got == landed {
        c.state(&lab, A, 2, 0);
        c.records(&lab, A, &[]);
    } else {
        // The apply committed under generation 1; now the install may land.
        c.install(&mut authority, A, 2, INSTALLED);
        c.state(&lab, A, 2, 5);
        c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
    }
}

/// install_generation meets a held row as contention, and from its read to
/// its write lets no other install and no apply in: paused there, another
/// install and an apply on other sessions both meet contention. If they
/// land (the pause fell in a check made before the decisive one), its own
/// install must end as not higher. The generation read and the write fall
/// in one transaction.
///
/// A write's checkpoint fires inside the write, with the row already locked
/// by it, so the pause that finds a lock taken too late (or never taken)
/// is the one after the read.
#[rstest]
#[case::after_its_read(Checkpoint::GenerationRead)]
#[case::before_its_write(Checkpoint::BeforeInstall)]
fn l3_3_no_install_or_apply_lands_between_install_reading_and_writing(
    lab: Lab,
    #[case] pause: Checkpoint,
) {
    let c = claim("L3.3");
    let mut authority = lab.connect().unwrap();

    let holder = lab.hold_row_lock(A).unwrap();
    c.install(&mut authority, A, 2, contention());
    holder.release().unwrap();
    c.state(&lab, A, 1, 0);

    let pid = Lab::backend_pid(&mut authority, Call::Install).unwrap();
    let seen = Seen::default();
    let transactions = Transactions::default();
    let (hook_lab, hook_seen, hook_transactions) =
        (lab.clone(), seen.clone(), transactions.clone());
    let mut tried = false;
    authority.on_checkpoint(move |checkpoint| {
        if matches!(
            checkpoint,
            Checkpoint::GenerationRead | Checkpoint::BeforeInstall
        ) {
            hook_transactions.note(&hook_lab, pid, checkpoint);
        }
        if checkpoint == pause && !std::mem::replace(&mut tried, true) {
            let install = hook_lab.connect()?.install_generation(A, 3);
            hook_seen.push(format!("install {A}: {}", describe_install(&install)));
            let apply = hook_lab.connect()?.apply(A, 1, "r1", 5);
            hook_seen.push(format!("apply: {}", describe(&apply)));
        }
        Ok(())
    });
    let result = describe_install(&authority.install_generation(A, 2));
    let refused = format!(
        "install {A}: {0}; apply: {0}; install_generation(fund-A, 2): {INSTALLED}",
        contention()
    );
    let landed = format!(
        "install {A}: {INSTALLED}; apply: {}; install_generation(fund-A, 2): {}",
        stale(1, 3),
        not_higher(2, 3)
    );
    let got = format!("{}; install_generation(fund-A, 2): {result}", seen.lines());
    c.while_paused(
        &authority,
        format_args!("install_generation(fund-A, 2), paused {pause} while another session installs 3 and a worker applies under 1"),
        if got == landed { &landed } else { &refused },
        got.as_str(),
    );
    if let Err(got) = transactions.write_checked(Checkpoint::BeforeInstall) {
        c.fail(
            "the transactions install_generation's checkpoints fell in, as the server names them",
            "the generation read in the transaction that writes the new one",
            got,
        );
    }
    if got == landed {
        c.state(&lab, A, 3, 0);
    } else {
        c.state(&lab, A, 2, 0);
    }
    c.records(&lab, A, &[]);
}

/// Where SQLite's write lock would hold the whole file, PostgreSQL's row
/// lock holds one resource. While apply sits before its effect on fund-A,
/// fund-A's row is locked, and on fund-B another session locks the row,
/// the authority installs 2 and a worker applies under it.
#[rstest]
fn l3_7_apply_paused_on_fund_a_leaves_fund_b_free(lab: Lab) {
    let c = claim("L3.7");
    let mut worker = lab.connect().unwrap();

    let seen = Seen::default();
    let (hook_lab, hook_seen) = (lab.clone(), seen.clone());
    pause_at(&mut worker, Checkpoint::BeforeEffect, move || {
        hook_seen.push(probe(&hook_lab, A));
        probe_and_install(&hook_lab, &hook_seen, B, 2)?;
        let apply = hook_lab.connect()?.apply(B, 2, "b1", 3);
        hook_seen.push(format!("apply {B}: {}", describe(&apply)));
        Ok(())
    });
    c.apply(&mut worker, (A, 1, "a1", 5), applied(5));
    c.while_paused(
        &worker,
        "while apply on fund-A was paused before its effect",
        format!(
            "probe {A}: {}; probe {B}: acquired the row lock; install {B}: {INSTALLED}; apply {B}: {}",
            contention(),
            applied(3)
        ),
        seen.lines(),
    );
    c.state(&lab, A, 1, 5);
    c.state(&lab, B, 2, 3);
    c.records(&lab, B, &[rec(B, "b1", 3, 3, 2)]);
}
