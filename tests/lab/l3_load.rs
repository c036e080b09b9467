//! L3.6: the decision under load. Real threads, each with its own
//! connection, race for the one write lock while the authority moves on.
//! Nothing here sleeps: a worker that meets contention yields and tries
//! again, and the installs are paced by progress, not by time (see
//! [`Pace`]). The workers come in twos that send the same requests (same
//! ids, same deltas) at the same time, as a client that resends on a second
//! connection would: every request is applied once, and its twin's delivery
//! is answered as a replay of it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::thread;

use fencing_lab::{Journal, Lab, LabConnection, LabError, Outcome, Session, describe_error};
use rstest::rstest;

use crate::support::*;

/// How much load: worker threads, requests per worker, and the last
/// generation the authority installs (it installs 2, 3, ... up to it).
struct Load {
    threads: usize,
    requests: usize,
    last_generation: i64,
}

impl Load {
    fn new() -> Load {
        if thorough() {
            Load {
                threads: 8,
                requests: 100,
                last_generation: 9,
            }
        } else {
            Load {
                threads: 4,
                requests: 25,
                last_generation: 5,
            }
        }
    }
}

/// Where the installs land: generation g once the workers have applied
/// (g - 1) / last of all their requests. The authority waits for that much
/// progress, and the workers wait for the install once they have made it,
/// so every install lands in the middle of the run with workers still
/// holding the generation before it, however the threads are scheduled.
struct Pace {
    /// Requests applied so far, all workers together.
    progress: AtomicUsize,
    /// The last generation the authority installed.
    installed: AtomicI64,
    /// Set when the authority has stopped (done, or failed).
    authority_done: AtomicBool,
    /// Set when every worker has stopped (done, or failed).
    workers_done: AtomicBool,
    /// All the requests of all the workers.
    total: usize,
    /// The last generation the authority installs.
    last: i64,
}

impl Pace {
    fn new(total: usize, last: i64) -> Pace {
        Pace {
            progress: AtomicUsize::new(0),
            installed: AtomicI64::new(1),
            authority_done: AtomicBool::new(false),
            workers_done: AtomicBool::new(false),
            total,
            last,
        }
    }

    /// How many requests must be applied before `generation` is installed.
    fn due(&self, generation: i64) -> usize {
        let share = usize::try_from(generation - 1).expect("small");
        self.total * share / usize::try_from(self.last).expect("small")
    }

    /// A worker, before each new request: wait while the next install is
    /// due and has not landed.
    fn worker_waits(&self) {
        loop {
            let next = self.installed.load(Ordering::SeqCst) + 1;
            if next > self.last
                || self.authority_done.load(Ordering::SeqCst)
                || self.progress.load(Ordering::SeqCst) < self.due(next)
            {
                return;
            }
            thread::yield_now();
        }
    }

    /// The authority, before installing `generation`: wait until it is due.
    /// `false` if the workers stopped first.
    fn authority_waits(&self, generation: i64) -> bool {
        while self.progress.load(Ordering::SeqCst) < self.due(generation) {
            if self.workers_done.load(Ordering::SeqCst) {
                return false;
            }
            thread::yield_now();
        }
        true
    }
}

/// How many threads deliver each request: two, at the same time.
const DELIVERIES: usize = 2;

/// Contention retries of one call before a thread gives up. A fair run
/// needs a handful; this only bounds a run whose lock is never released.
const MAX_ATTEMPTS: usize = 100_000;

/// What one worker thread saw.
#[derive(Default)]
struct Worker {
    /// (request id, delta, result, generation) of every applied request.
    applied: Vec<(String, i64, i64, i64)>,
    /// (request id, result) of every delivery answered as a replay.
    replayed: Vec<(String, i64)>,
    /// Calls refused by contention (each retried).
    contention: usize,
    /// Calls rejected as stale, with the installed generation they named.
    stale: Vec<i64>,
    /// Calls made, retries included.
    calls: usize,
    /// What went wrong, if anything; the thread stops at the first.
    problem: Option<String>,
}

/// What the authority thread saw.
#[derive(Default)]
struct Authority {
    /// The generations it installed, in order.
    installed: Vec<i64>,
    /// Installs refused by contention (each retried).
    contention: usize,
    /// What went wrong, if anything.
    problem: Option<String>,
}

/// Opens a connection, trying again on contention: threads that open the
/// file at the same moment can find it busy (in WAL mode, while one of them
/// builds the shared index).
fn connect(lab: &Lab) -> Result<LabConnection, LabError> {
    for _ in 0..MAX_ATTEMPTS {
        match lab.connect() {
            Err(LabError::Contention) => thread::yield_now(),
            other => return other,
        }
    }
    Err(LabError::Contention)
}

/// Reads the installed generation as an observer, trying again while a
/// writer's commit holds the file (in the rollback journal, readers wait
/// for that too).
fn read_generation(lab: &Lab) -> Result<i64, LabError> {
    for _ in 0..MAX_ATTEMPTS {
        match lab.state(A) {
            Err(LabError::Contention) => thread::yield_now(),
            other => return other.map(|state| state.generation),
        }
    }
    Err(LabError::Contention)
}

/// Worker `w`: `requests` distinct requests, the same as its twin's (the
/// other worker of its [`DELIVERIES`]), each retried on contention until it
/// is decided, applied or replayed; on stale it reads the generation again
/// and asks again with the same request id.
fn work(lab: &Lab, w: usize, requests: usize, start: &Barrier, pace: &Pace) -> Worker {
    let mut seen = Worker::default();
    let db = connect(lab);
    start.wait();
    let result = (|| -> Result<(), String> {
        let mut db =
            db.map_err(|e| format!("worker {w} cannot connect: {}", describe_error(&e)))?;
        let mut held = read_generation(lab).map_err(|e| describe_error(&e))?;
        for i in 0..requests {
            let twins = w / DELIVERIES;
            let id = format!("t{twins}-{i}");
            let delta = i64::try_from(twins * 1000 + i + 1).expect("small");
            pace.worker_waits();
            let mut attempts = 0;
            loop {
                attempts += 1;
                seen.calls += 1;
                let step = format!("worker {w}: apply({A}, generation {held}, {id:?}, {delta:+})");
                match db.apply(A, held, &id, delta) {
                    Ok(Outcome::Applied { result }) => {
                        seen.applied.push((id.clone(), delta, result, held));
                        pace.progress.fetch_add(1, Ordering::SeqCst);
                        break;
                    }
                    // Its twin's delivery came first; whether it returned
                    // the original result is checked at the end.
                    Ok(Outcome::Replayed { result }) => {
                        seen.replayed.push((id.clone(), result));
                        pace.progress.fetch_add(1, Ordering::SeqCst);
                        break;
                    }
                    Err(LabError::Contention) if attempts < MAX_ATTEMPTS => {
                        seen.contention += 1;
                        thread::yield_now();
                    }
                    Err(LabError::Stale {
                        presented,
                        installed,
                    }) if presented == held && installed > held => {
                        seen.stale.push(installed);
                        // Generations only rise: if the one this worker
                        // holds is still installed now, it was installed
                        // when apply said "stale" too.
                        let now = read_generation(lab).map_err(|e| describe_error(&e))?;
                        if now == held {
                            return Err(format!(
                                "{step} -> {}, but generation {held} is still installed",
                                rejected(LabError::Stale {
                                    presented,
                                    installed
                                })
                            ));
                        }
                        held = now;
                    }
                    // Everything else is a wrong answer: a database error
                    // where a duplicate met its twin, a generation this worker
                    // read from the destination called never issued, a
                    // stale with the wrong numbers, or worse.
                    other => return Err(format!("{step} -> {}", fencing_lab::describe(&other))),
                }
            }
        }
        Ok(())
    })();
    seen.problem = result.err();
    seen
}

/// The authority installs 2, 3, ... as [`Pace`] says, retrying on
/// contention.
fn authorize(lab: &Lab, start: &Barrier, pace: &Pace) -> Authority {
    let seen = authorize_until_done(lab, start, pace);
    pace.authority_done.store(true, Ordering::SeqCst);
    seen
}

fn authorize_until_done(lab: &Lab, start: &Barrier, pace: &Pace) -> Authority {
    let mut seen = Authority::default();
    let db = connect(lab);
    start.wait();
    let mut db = match db {
        Ok(db) => db,
        Err(error) => {
            seen.problem = Some(format!(
                "the authority cannot connect: {}",
                describe_error(&error)
            ));
            return seen;
        }
    };
    for generation in 2..=pace.last {
        if !pace.authority_waits(generation) {
            return seen;
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            match db.install_generation(A, generation) {
                Ok(()) => {
                    seen.installed.push(generation);
                    pace.installed.store(generation, Ordering::SeqCst);
                    break;
                }
                Err(LabError::Contention) if attempts < MAX_ATTEMPTS => {
                    seen.contention += 1;
                    thread::yield_now();
                }
                Err(error) => {
                    seen.problem = Some(format!(
                        "authority: install_generation({A}, {generation}) -> {}",
                        describe_install(&Err(error))
                    ));
                    return seen;
                }
            }
        }
    }
    seen
}

/// N worker threads, each with its own connection, apply requests (every
/// one sent by two threads at once) with retries on contention while the
/// authority installs new generations. At the end: every request was
/// applied exactly once, its other delivery replayed the original result,
/// under a generation
/// the authority installed; the records form one serial history whose
/// generations never go back; the value is the sum of the accepted deltas;
/// and no contention was ever answered as a generation rejection.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l3_6_threads_retrying_on_contention_keep_the_invariants(#[case] journal: Journal) {
    let c = claim("L3.6");
    let load = Load::new();
    let lab = Lab::new(journal).expect("the harness creates a lab");
    // Deliveries, and the distinct requests they carry.
    let total = load.threads * load.requests;
    let requests = total / DELIVERIES;
    let start = Barrier::new(load.threads + 1);
    let pace = Pace::new(total, load.last_generation);

    let (workers, authority) = thread::scope(|scope| {
        let authority = scope.spawn(|| authorize(&lab, &start, &pace));
        let handles: Vec<_> = (0..load.threads)
            .map(|w| {
                let (lab, start, pace) = (&lab, &start, &pace);
                scope.spawn(move || work(lab, w, load.requests, start, pace))
            })
            .collect();
        let workers: Vec<Worker> = handles
            .into_iter()
            .map(|handle| handle.join().expect("a worker thread does not panic"))
            .collect();
        // A worker that stopped early never brings the progress the
        // authority waits for.
        pace.workers_done.store(true, Ordering::SeqCst);
        let authority = authority
            .join()
            .expect("the authority thread does not panic");
        (workers, authority)
    });

    let setting = format!(
        "{} threads x {} requests, installs up to {} ({journal})",
        load.threads, load.requests, load.last_generation
    );
    if let Some(problem) = authority
        .problem
        .iter()
        .chain(workers.iter().filter_map(|w| w.problem.as_ref()))
        .next()
    {
        c.fail(
            &setting,
            "every call decided: applied, or stale and retried",
            problem,
        );
    }

    // Every request was applied once, and its record says what apply said.
    let installed: BTreeSet<i64> = std::iter::once(1)
        .chain(authority.installed.iter().copied())
        .collect();
    let answers: Vec<(String, (i64, i64, i64))> = workers
        .iter()
        .flat_map(|w| w.applied.iter())
        .map(|(id, delta, result, generation)| (id.clone(), (*delta, *result, *generation)))
        .collect();
    let applied: BTreeMap<String, (i64, i64, i64)> = answers.iter().cloned().collect();
    c.same(
        &setting,
        format!("{requests} requests applied, each once"),
        if applied.len() == requests && answers.len() == requests {
            format!("{requests} requests applied, each once")
        } else {
            format!(
                "{} requests applied, {} applies in all",
                applied.len(),
                answers.len()
            )
        },
    );
    // The other delivery of each got the original result.
    for (id, result) in workers.iter().flat_map(|w| w.replayed.iter()) {
        let original = applied.get(id).map(|&(_, result, _)| result);
        c.same(
            format_args!("the delivery of {id:?} answered as a replay after {setting}"),
            original.map_or_else(|| "never applied".to_owned(), replayed),
            if original.is_some() {
                replayed(*result)
            } else {
                format!("{} of a request never applied", replayed(*result))
            },
        );
    }
    let records = lab.records(A).expect("the observer reads the records");
    let recorded: BTreeMap<String, (i64, i64, i64)> = records
        .iter()
        .map(|r| (r.request_id.clone(), (r.delta, r.result, r.generation)))
        .collect();
    c.same(
        format_args!("records of {A} after {setting}"),
        format!("{} records, each as apply returned it", applied.len()),
        if recorded == applied && records.len() == applied.len() {
            format!("{} records, each as apply returned it", applied.len())
        } else {
            format!("{} records, not as apply returned them", records.len())
        },
    );

    // Sorted by result, the records must be one serial history: each result
    // is the one before plus its delta (no update lost or applied twice),
    // under a generation that was installed and never goes back.
    let mut history: Vec<(i64, i64, i64)> = recorded.values().map(|&(d, r, g)| (r, d, g)).collect();
    history.sort_unstable();
    let (mut value, mut generation) = (0i64, 1i64);
    for (result, delta, under) in &history {
        let ok = *result == value + delta && *under >= generation && installed.contains(under);
        c.same(
            format_args!("the record with result {result} ({delta:+}, generation {under}), after value {value} under generation {generation}"),
            "the value before plus its delta, under an installed generation no older",
            if ok {
                "the value before plus its delta, under an installed generation no older"
            } else {
                "a break in the serial history"
            },
        );
        (value, generation) = (*result, *under);
    }
    let sum: i64 = applied.values().map(|(delta, _, _)| delta).sum();
    c.state(&lab, A, *installed.last().expect("generation 1"), sum);

    // A stale rejection named a generation that was really installed.
    for named in workers.iter().flat_map(|w| w.stale.iter()) {
        c.same(
            "a stale rejection's installed generation",
            "one the authority installed",
            if installed.contains(named) {
                "one the authority installed".to_owned()
            } else {
                format!("{named}, which nobody installed")
            },
        );
    }

    let contention: usize = workers.iter().map(|w| w.contention).sum();
    let calls: usize = workers.iter().map(|w| w.calls).sum();
    let stale: usize = workers.iter().map(|w| w.stale.len()).sum();
    println!(
        "L3.6 {setting}: {calls} apply calls, {requests} applied, {} replayed, \
         {contention} contention, {stale} stale, {} installs ({} contention)",
        total - requests,
        authority.installed.len(),
        authority.contention
    );
}
