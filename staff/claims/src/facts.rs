//! What happened in a failing step, as data: the facts a hint is chosen on
//! and its premise is checked against.
//!
//! A step's words (`expected: applied, result 5`, `got: rejected: stale
//! generation: presented 1, installed 1`) are written for the learner; a
//! hint must not be picked by reading them back. So the harness hands the
//! catalogue what it held when it wrote them: the learner's call's answer
//! as a kind with its numbers ([`Answer`]), the observer's view of a
//! resource ([`Observed::State`]), the records it read, one per request,
//! with their ids exactly as stored ([`Observed::Records`]), what other
//! actors met while the call was paused ([`Observed::Met`]), and where the
//! test paused the call ([`Pause`]). [`crate::hints::for_step`] chooses on
//! these, and each hint's premise is a predicate on them.
//!
//! Some steps have only words: an explorer's broken invariant, an etcd
//! worker's report, a line that lists what several callers were answered,
//! and every `expected`, which the harness writes itself. [`Facts::read`]
//! reads such words into the same model, the one place that does. Every
//! graded failure first checks that the words of each kind of answer read
//! back as that answer (the lab's `scenes::expect::reads_back`), so the
//! premise check that CI runs over printed failures (`cargo xtask premises`)
//! checks the same facts that chose each hint.
//!
//! A lab's [`Trace`] keeps what its connections did, as [`Event`]s, in the
//! order it happened at the destination; a failing step carries them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

/// What one call was answered, or what an actor met while a call was
/// paused, by kind, with the numbers a hint reasons about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Applied now; the new value.
    Applied(i64),
    /// A replay; the original result.
    Replayed(i64),
    /// An install that went in.
    Installed,
    /// An operator's statement that went in.
    Written,
    /// A probe found the write lock free.
    Acquired,
    /// Refused as stale: (presented, installed), where the words name them.
    Stale(Option<(i64, i64)>),
    /// Refused as never issued: (presented, installed), where named.
    NeverIssued(Option<(i64, i64)>),
    /// An install refused as not higher.
    NotHigher,
    /// A request id reused with another delta.
    Conflict,
    /// A resource the lab does not have.
    Unknown,
    /// A value that would leave the i64 range.
    Overflow,
    /// Input that is never valid: an empty request id, a generation below 1.
    BadInput,
    /// A request id past the contract's length, which the destination's
    /// table refuses by itself.
    IdTooLong,
    /// The fault the test injected between a call's two writes: the call
    /// was due to get that far.
    Fault,
    /// Another connection held the lock (or, on PostgreSQL, a
    /// serialization failure): nothing was decided.
    Contention,
    /// The database refused a second row with the same key.
    DuplicateKey,
    /// Any other database failure.
    DatabaseError,
    /// The lab's authorizer refused a statement of the code under test.
    NotAllowed,
    /// The exercise still holds its `todo!()`.
    NotImplemented,
    /// The exercise panicked.
    Panicked,
    /// An answer the lab has no kind for.
    Other,
}

impl Answer {
    /// The answer in a few words (`applied 5`, `stale (presented 1,
    /// installed 2)`).
    pub fn short(&self) -> String {
        use Answer::*;
        match self {
            Applied(result) => format!("applied {result}"),
            Replayed(result) => format!("replayed {result}"),
            Stale(Some((presented, installed))) => {
                format!("stale (presented {presented}, installed {installed})")
            }
            NeverIssued(Some((presented, installed))) => {
                format!("never issued (presented {presented}, installed {installed})")
            }
            Stale(None) => "stale".to_owned(),
            NeverIssued(None) => "never issued".to_owned(),
            other => format!("{other:?}")
                .chars()
                .enumerate()
                .flat_map(|(i, c)| {
                    let space = (i > 0 && c.is_uppercase()).then_some(' ');
                    space.into_iter().chain(c.to_lowercase())
                })
                .collect(),
        }
    }

    /// Refused by its generation: stale or never issued.
    pub fn refused_by_generation(&self) -> bool {
        matches!(self, Answer::Stale(_) | Answer::NeverIssued(_))
    }

    /// A refusal by generation whose two numbers are the same: the one
    /// case a comparison of the generation lets through.
    pub fn numbers_agree(&self) -> bool {
        matches!(self, Answer::Stale(Some((p, i))) | Answer::NeverIssued(Some((p, i))) if p == i)
    }

    /// The call went through: applied, replayed or installed.
    pub fn accepted(&self) -> bool {
        matches!(
            self,
            Answer::Applied(_) | Answer::Replayed(_) | Answer::Installed
        )
    }

    /// An actor got through a lock: acquired it, or installed or applied.
    pub fn through(&self) -> bool {
        matches!(
            self,
            Answer::Acquired | Answer::Installed | Answer::Applied(_)
        )
    }

    /// A verdict on the request: accepted, or refused for a reason of the
    /// contract (not contention, a fault or a failure).
    pub fn verdict(&self) -> bool {
        use Answer::*;
        matches!(
            self,
            Applied(_)
                | Replayed(_)
                | Installed
                | Stale(_)
                | NeverIssued(_)
                | NotHigher
                | Conflict
                | Unknown
                | Overflow
                | BadInput
                | IdTooLong
        )
    }
}

/// One record the observer read, as the destination stores it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Recorded {
    /// The resource.
    pub resource: String,
    /// The request id, byte for byte.
    pub request_id: String,
    /// The delta recorded.
    pub delta: i64,
    /// The result recorded: what a replay answers.
    pub result: i64,
    /// The generation the request was applied under.
    pub generation: i64,
}

/// What one actor the test ran while a call was paused met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    /// Who (`probe`, `install`, `apply`, `worker B`).
    pub actor: String,
    /// What it met.
    pub answer: Answer,
}

/// What a step compares: what a call answered, or what the observer read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A call's answer.
    Answer(Answer),
    /// The observer's view of a resource.
    State {
        /// The installed generation.
        generation: i64,
        /// The value.
        value: i64,
    },
    /// Every record of a resource, sorted.
    Records(Vec<Recorded>),
    /// What the actors the test ran while a call was paused met, in order.
    Met(Vec<Met>),
    /// What each of several callers was answered (`r1 -> …; r2 -> …`), and
    /// the value after, if the step names it.
    Answers {
        /// Each caller and its answer.
        answers: Vec<(String, Answer)>,
        /// The value the observer read after them.
        value: Option<i64>,
    },
    /// The checkpoint the test waited for was never reached.
    NeverReached,
    /// Words the lab has no facts for (an explorer's invariant, an etcd
    /// worker's report).
    Words,
}

impl Observed {
    /// The answer, if this is one.
    pub fn answer(&self) -> Option<&Answer> {
        match self {
            Observed::Answer(answer) => Some(answer),
            _ => None,
        }
    }

    /// Whether this is an answer for which `test` holds.
    pub fn is(&self, test: impl Fn(&Answer) -> bool) -> bool {
        self.answer().is_some_and(test)
    }

    /// The records, sorted, from a list in any order.
    pub fn records(mut records: Vec<Recorded>) -> Observed {
        records.sort();
        Observed::Records(records)
    }
}

/// Where the test held the learner's call when the step was taken, and
/// what it did meanwhile; a step may show several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// At one of its checkpoints (any of the ones below, or another).
    Held,
    /// Between two of the call's own transactions, where another actor
    /// acted.
    BetweenTransactions,
    /// After one of its reads, and an install got in meanwhile.
    InstallGotIn,
    /// The step is what other actors met while the call was paused.
    OthersActed,
    /// While another request ran to its end.
    OtherRanToEnd,
    /// The worker's own temporary relations, named like the lab's tables,
    /// were in place (lesson L8).
    WorkerRelations,
}

/// A failing step, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Where the test held the call and what it did meanwhile, if it did.
    pub pauses: Vec<Pause>,
    /// What the claim expects, where it first differs from `got`.
    pub expected: Observed,
    /// What the code under test produced, where it first differs.
    pub got: Observed,
    /// The whole of what was expected.
    pub expected_whole: Observed,
    /// The whole of what was produced.
    pub got_whole: Observed,
    /// The words of an etcd worker's step and of lesson 8's refusals, whose
    /// producers report prose: the first lines that differ.
    pub words: (String, String),
    /// What the lab's connections did up to the step, in the order it
    /// happened there, where the lab keeps that (empty otherwise).
    pub events: Vec<Event>,
    /// What the test calls each connection it named (`worker A`).
    pub names: Vec<(usize, String)>,
    /// Whether the events are one whole schedule of an exploration, told
    /// whole, rather than the run around the failing call.
    pub whole: bool,
}

impl Facts {
    /// The facts of a step that compared one typed `expected` with one
    /// typed `got`.
    pub fn of(pauses: Vec<Pause>, expected: Observed, got: Observed) -> Facts {
        Facts {
            pauses,
            expected_whole: expected.clone(),
            got_whole: got.clone(),
            expected,
            got,
            words: (String::new(), String::new()),
            events: Vec::new(),
            names: Vec::new(),
            whole: false,
        }
    }

    /// The facts of a step whose producer has only words: `step` names
    /// what the test did, `expected` and `got` are its two lines.
    pub fn read(step: &str, expected: &str, got: &str) -> Facts {
        let (first_expected, first_got) = words::first_difference(expected, got);
        Facts {
            pauses: words::pauses(step),
            expected: words::observed(first_expected),
            got: words::observed(first_got),
            expected_whole: words::observed(expected),
            got_whole: words::observed(got),
            words: (first_expected.to_owned(), first_got.to_owned()),
            events: Vec::new(),
            names: Vec::new(),
            whole: false,
        }
    }

    /// Whether the test held the call as `pause` says.
    pub fn held_at(&self, pause: Pause) -> bool {
        self.pauses.contains(&pause)
    }

    /// Whether the test held the call at one of its checkpoints.
    pub fn held(&self) -> bool {
        self.pauses.contains(&Pause::Held)
    }

    /// The failing call's run, from the events, where another connection
    /// acted during it: each connection's calls, checkpoints, commits
    /// (with the generation installed once each committed) and answers,
    /// in the order they happened at the destination. `None` where the
    /// lab kept no events or the call ran alone.
    pub fn happened(&self) -> Option<String> {
        let (actor, run) = self.last_call()?;
        if run.iter().all(|event| event.actor() == actor) {
            return None;
        }
        let name = |actor: usize| {
            self.names
                .iter()
                .find(|(a, _)| *a == actor)
                .map_or_else(|| format!("connection {actor}"), |(_, name)| name.clone())
        };
        let mut parts: Vec<String> = Vec::new();
        let mut speaking = None;
        for (i, event) in run.iter().enumerate() {
            // The end of a transaction whose commit or rollback was just
            // told.
            let just_ended = run[..i]
                .iter()
                .rev()
                .find(|earlier| earlier.actor() == event.actor())
                .is_some_and(|earlier| matches!(earlier, Event::Ended { .. }));
            let said = match event {
                Event::Called { call, .. } => call.to_string(),
                Event::Resumed { .. } => "went on".to_owned(),
                Event::Reached { at, .. } => match at {
                    Checkpoint::TransactionEnded if just_ended => continue,
                    Checkpoint::TransactionEnded => "ended a transaction".to_owned(),
                    Checkpoint::GenerationRead => "read the generation".to_owned(),
                    Checkpoint::RecordRead => "looked the record up".to_owned(),
                    Checkpoint::ValueRead => "read the value".to_owned(),
                    Checkpoint::BeforeEffect => "wrote the value".to_owned(),
                    Checkpoint::BeforeRecord => "wrote the record".to_owned(),
                    Checkpoint::BeforeInstall => "wrote the generation".to_owned(),
                    Checkpoint::CallStarted | Checkpoint::WorkerChecked => continue,
                },
                Event::Ended {
                    committed: true,
                    wrote: false,
                    ..
                } => "committed (wrote nothing)".to_owned(),
                Event::Ended {
                    committed: true,
                    installed: Some(generation),
                    ..
                } => format!("committed (generation {generation} installed)"),
                Event::Ended {
                    committed: true, ..
                } => "committed".to_owned(),
                Event::Ended { .. } => "rolled back".to_owned(),
                Event::Answered { answer, .. } => format!("answered {}", answer.short()),
                Event::Coordinated { what, .. } => what.said(&name),
            };
            if speaking == Some(event.actor()) {
                parts.push(said);
            } else {
                speaking = Some(event.actor());
                parts.push(format!("{}: {said}", name(event.actor())));
            }
        }
        Some(parts.join(", "))
    }

    /// The failing call's run as one line for the grader ([`wire`]), where
    /// another connection acted ([`Facts::drawn`]): what the grader draws.
    pub fn run_line(&self) -> Option<String> {
        self.drawn().map(|run| self.line(run))
    }

    /// What a failing step's picture shows, where another connection
    /// acted: the last call, if one acted during it; else the run up to
    /// that call's answer, if one acted before it (a worker that paused
    /// before its call while the authority installed). `None` where the
    /// call's connection acted alone.
    pub fn drawn(&self) -> Option<&[Event]> {
        let (actor, call) = self.last_call()?;
        if call.iter().any(|event| event.actor() != actor) {
            return Some(call);
        }
        let so_far = self.so_far()?;
        so_far
            .iter()
            .any(|event| event.actor() != actor)
            .then_some(so_far)
    }

    /// The run up to the last call's answer, as one line ([`wire`]): the
    /// reference's run of a step, from which the grader cuts the part
    /// that a failure's picture shows.
    pub fn so_far_line(&self) -> Option<String> {
        self.so_far().map(|run| self.line(run))
    }

    /// The events up to the last call's answer.
    fn so_far(&self) -> Option<&[Event]> {
        if self.whole {
            return Some(&self.events[..]);
        }
        let answered = self
            .events
            .iter()
            .rposition(|event| matches!(event, Event::Answered { .. }))?;
        Some(&self.events[..=answered])
    }

    /// `run` as one line, with the names of the connections in it.
    fn line(&self, run: &[Event]) -> String {
        let actors: Vec<usize> = run.iter().map(Event::actor).collect();
        let names: Vec<(usize, String)> = self
            .names
            .iter()
            .filter(|(actor, _)| actors.contains(actor))
            .cloned()
            .collect();
        wire::encode(&names, run)
    }

    /// The last call that answered, from its start to its answer: its
    /// connection and the events between, every connection's.
    pub fn last_call(&self) -> Option<(usize, &[Event])> {
        let events = &self.events;
        if self.whole {
            // A schedule told whole: from its first event, about its first
            // actor.
            return Some((events.first()?.actor(), &events[..]));
        }
        let answered = events
            .iter()
            .rposition(|event| matches!(event, Event::Answered { .. }))?;
        let actor = events[answered].actor();
        let called = events[..answered]
            .iter()
            .rposition(|event| matches!(event, Event::Called { actor: a, .. } if *a == actor))?;
        Some((actor, &events[called..=answered]))
    }

    /// Whether another connection committed while the last call was under
    /// way; `None` where the lab saw no commits (PostgreSQL, or no events).
    pub fn others_committed_during_the_call(&self) -> Option<bool> {
        let (actor, run) = self.last_call()?;
        let commits_seen = self.events.iter().any(|e| matches!(e, Event::Ended { .. }));
        commits_seen.then(|| {
            run.iter().any(|event| {
                matches!(event, Event::Ended { actor: a, committed: true, .. } if *a != actor)
            })
        })
    }

    /// These facts, with `got` typed by its producer in place of what its
    /// words read as, and `expected`'s words kept.
    pub fn with_got(self, got: Observed) -> Facts {
        Facts {
            got_whole: got.clone(),
            got,
            ..self
        }
    }
}

/// A point in `apply` or `install_generation` where the hook is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Checkpoint {
    /// A call of `apply` or `install_generation` (or a counterexample)
    /// starts, before any statement: where a hook that counts per call
    /// starts counting.
    CallStarted,
    /// Just after a statement that read a resource's generation
    /// (`Tx::installed_generation`, or a
    /// `SELECT` of one's own), before the connection does anything else.
    GenerationRead,
    /// Just after a statement that read the `requests` table (a record
    /// lookup, whether it found one or not), before anything else.
    RecordRead,
    /// On PostgreSQL only: just after a statement that read a resource's
    /// value without its generation (`PgTx::value`,
    /// or a `SELECT` of one's own). Read before the row is locked, the
    /// value can be overtaken by another session's effect; SQLite's
    /// transactions are serializable, and a value read there is not a
    /// moment worth pausing at.
    ValueRead,
    /// Just before a resource's value changes: every check is done and the
    /// effect is next.
    BeforeEffect,
    /// Just before a record goes into `requests`. In the reference the
    /// value is written by then, so a fault here falls between the effect
    /// and its record.
    BeforeRecord,
    /// Just before a resource's generation changes.
    BeforeInstall,
    /// Between two transactions of one call: the first has ended (its
    /// commit or rollback returned, its locks are released) and nothing
    /// else has started. Code that decides in one transaction and writes
    /// in the next pauses here; code that runs in one transaction never
    /// does (its last commit is the end of the call).
    TransactionEnded,
    /// In the worker-side-check counterexample: the worker has checked its
    /// generation and is about to write without one.
    WorkerChecked,
}

impl std::fmt::Display for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Checkpoint::CallStarted => "when the call started",
            Checkpoint::GenerationRead => "after the generation was read",
            Checkpoint::RecordRead => "after the record was looked up",
            Checkpoint::ValueRead => "after the value was read",
            Checkpoint::BeforeEffect => "before the effect",
            Checkpoint::BeforeRecord => "before the record",
            Checkpoint::BeforeInstall => "before the install",
            // The hints find a pause between transactions by these words.
            Checkpoint::TransactionEnded => words::TRANSACTION_ENDED,
            Checkpoint::WorkerChecked => "after the worker's check",
        })
    }
}

/// A call of the code under test, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `apply(resource, generation, request_id, delta)`.
    Apply {
        /// The resource.
        resource: String,
        /// The generation presented.
        generation: i64,
        /// The request id.
        request_id: String,
        /// The delta.
        delta: i64,
    },
    /// `install_generation(resource, generation)`.
    Install {
        /// The resource.
        resource: String,
        /// The generation to install.
        generation: i64,
    },
    /// An operator's `UPDATE` of the value straight in the table, past the
    /// contract (L5.3's counterexample; harness code, never the learner's).
    DirectWrite {
        /// The resource.
        resource: String,
        /// The value written.
        value: i64,
    },
    /// An operator's restore of an old generation from a backup (L5.4's
    /// counterexample; harness code, never the learner's).
    Restore {
        /// The resource.
        resource: String,
        /// The generation restored.
        generation: i64,
    },
}

impl Call {
    /// The resource the call is about.
    pub fn resource(&self) -> &str {
        match self {
            Call::Apply { resource, .. }
            | Call::Install { resource, .. }
            | Call::DirectWrite { resource, .. }
            | Call::Restore { resource, .. } => resource,
        }
    }
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Apply {
                resource,
                generation,
                request_id,
                delta,
            } => write!(
                f,
                "apply({resource}, generation {generation}, {request_id:?}, {delta:+})"
            ),
            Call::Install {
                resource,
                generation,
            } => write!(f, "install_generation({resource}, {generation})"),
            Call::DirectWrite { resource, value } => {
                write!(f, "direct SQL: {resource}'s value = {value}")
            }
            Call::Restore {
                resource,
                generation,
            } => write!(f, "old backup: {resource}'s generation = {generation}"),
        }
    }
}

/// One thing a connection of the lab did, as the destination saw it. A
/// lab's events are kept in the order they happened there: the calls and
/// checkpoints in the order the test's one thread met them, and on SQLite
/// every commit and rollback in the order the database applied them (its
/// own commit and rollback hooks, which run inside the `COMMIT`), so a
/// commit is dated by the database, never by when its call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A call of the code under test began on connection `actor`.
    Called {
        /// The connection, numbered from 1 in the order the lab opened them.
        actor: usize,
        /// The call and its arguments.
        call: Call,
    },
    /// The call reached a checkpoint: a read done, a write about to be
    /// made, a transaction ended.
    Reached {
        /// The connection.
        actor: usize,
        /// Where.
        at: Checkpoint,
    },
    /// A transaction of `actor`'s ended.
    Ended {
        /// The connection.
        actor: usize,
        /// Committed, or rolled back.
        committed: bool,
        /// Whether the transaction reached a write (a checkpoint before
        /// one): a transaction that only read commits too.
        wrote: bool,
        /// The generation installed on the call's resource once it had
        /// ended (its own install, if it committed one).
        installed: Option<i64>,
    },
    /// The call went on after the test held it at its last checkpoint
    /// while other connections acted.
    Resumed {
        /// The connection.
        actor: usize,
    },
    /// The call returned.
    Answered {
        /// The connection.
        actor: usize,
        /// What it answered.
        answer: Answer,
    },
    /// On the etcd track, something outside the destination that the run
    /// turns on: a worker took the lock, the test froze or woke a worker's
    /// process, a lease ended.
    Coordinated {
        /// Who did it: a worker, the test, or etcd.
        actor: usize,
        /// What.
        what: Coordination,
    },
}

impl Coordination {
    /// What happened, in words, with `name` naming a worker (`froze worker
    /// 1 (SIGSTOP)`).
    pub fn said(self, name: &dyn Fn(usize) -> String) -> String {
        match self {
            Coordination::Locked => "took the lock".to_owned(),
            Coordination::Froze { worker } => format!("froze {} (SIGSTOP)", name(worker)),
            Coordination::LeaseEnded { worker } => format!("ended {}'s lease", name(worker)),
            Coordination::Woke { worker } => format!("woke {} (SIGCONT)", name(worker)),
            Coordination::Killed { worker } => format!("killed {} (SIGKILL)", name(worker)),
            Coordination::LeaderReplaced => "lost its leader and elected another".to_owned(),
        }
    }
}

/// What happened outside the destination on the etcd track, in the order
/// the test learned it: each worker process reports its own events
/// (`Locked`, its calls) before it stops where the test holds it, and the
/// test's own acts and what etcd did sit between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coordination {
    /// The worker holds the resource's lock: etcd granted its key.
    Locked,
    /// The test froze this worker's process (SIGSTOP).
    Froze {
        /// The worker.
        worker: usize,
    },
    /// This worker's lease ended (revoked, or run out): etcd deleted the
    /// lock key it held, if any, and the lock is free for the next.
    LeaseEnded {
        /// The worker whose lease it was.
        worker: usize,
    },
    /// The test woke this worker's process (SIGCONT).
    Woke {
        /// The worker.
        worker: usize,
    },
    /// The test killed this worker's process (SIGKILL): what it did not
    /// report is lost.
    Killed {
        /// The worker.
        worker: usize,
    },
    /// The cluster's leader was killed and the members left elected
    /// another.
    LeaderReplaced,
}

impl Event {
    /// The connection the event is about.
    pub fn actor(&self) -> usize {
        match self {
            Event::Called { actor, .. }
            | Event::Reached { actor, .. }
            | Event::Ended { actor, .. }
            | Event::Resumed { actor }
            | Event::Answered { actor, .. }
            | Event::Coordinated { actor, .. } => *actor,
        }
    }
}

/// The most events a lab keeps: a test that makes thousands of calls on
/// one lab (under load, a property's cases) keeps its first ones.
const MOST_EVENTS: usize = 4096;

/// A lab's events ([`Event`]), shared by every connection it opens and by
/// the hooks SQLite runs inside a `COMMIT` (hence `Arc` and `Mutex`).
#[derive(Clone, Default)]
pub struct Trace(Arc<Mutex<Log>>);

#[derive(Default)]
struct Log {
    events: Vec<Event>,
    /// How many connections joined.
    actors: usize,
    /// What the test calls each connection (`worker A`), where it said.
    names: HashMap<usize, String>,
    /// Each connection's call under way.
    calls: HashMap<usize, Call>,
    /// The connections whose open transaction is about to change a
    /// generation.
    installing: HashSet<usize>,
    /// The connections whose open transaction reached a write.
    writing: HashSet<usize>,
    /// The generation installed on each resource, as the commits made it.
    installed: HashMap<String, i64>,
}

impl Trace {
    /// The events of a lab whose resources start at these generations.
    pub fn new(start: &[(&str, i64)]) -> Trace {
        let trace = Trace::default();
        trace.log().installed = start
            .iter()
            .map(|&(resource, generation)| (resource.to_owned(), generation))
            .collect();
        trace
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection's number.
    #[doc(hidden)]
    pub fn join(&self) -> usize {
        let mut log = self.log();
        log.actors += 1;
        log.actors
    }

    /// Calls connection `actor` `name` (`worker A`) from now on, unless
    /// it has a name; a name another connection has already is numbered
    /// (`authority (2)`).
    pub fn name(&self, actor: usize, name: &str) {
        let mut log = self.log();
        if log.names.contains_key(&actor) {
            return;
        }
        let mut named = name.to_owned();
        let mut n = 1;
        while log.names.values().any(|other| *other == named) {
            n += 1;
            named = format!("{name} ({n})");
        }
        log.names.insert(actor, named);
    }

    /// What the test calls each connection it named.
    pub fn names(&self) -> Vec<(usize, String)> {
        let mut names: Vec<(usize, String)> = self
            .log()
            .names
            .iter()
            .map(|(actor, name)| (*actor, name.clone()))
            .collect();
        names.sort();
        names
    }

    /// Adds `event`.
    #[doc(hidden)]
    pub fn record(&self, event: Event) {
        let mut log = self.log();
        match &event {
            Event::Called { actor, call } => {
                log.calls.insert(*actor, call.clone());
            }
            Event::Reached {
                actor,
                at: Checkpoint::BeforeInstall,
            } => {
                log.installing.insert(*actor);
                log.writing.insert(*actor);
            }
            Event::Reached {
                actor,
                at: Checkpoint::BeforeEffect | Checkpoint::BeforeRecord,
            } => {
                log.writing.insert(*actor);
            }
            Event::Answered { actor, .. } => {
                log.calls.remove(actor);
            }
            _ => {}
        }
        if log.events.len() < MOST_EVENTS {
            log.events.push(event);
        }
    }

    /// A transaction of connection `actor` ended, `committed` or rolled
    /// back: called from SQLite's own hooks, inside the `COMMIT` or
    /// `ROLLBACK`, so in the database's order. Outside a call of the code
    /// under test (the harness's own statements) it adds nothing.
    #[doc(hidden)]
    pub fn ended(&self, actor: usize, committed: bool) {
        let mut log = self.log();
        let Some(call) = log.calls.get(&actor).cloned() else {
            return;
        };
        // An operator's statement runs past the checkpoints: it writes, and
        // a restore sets the generation.
        let operator = matches!(call, Call::DirectWrite { .. } | Call::Restore { .. });
        let installing = log.installing.remove(&actor) || matches!(call, Call::Restore { .. });
        let wrote = log.writing.remove(&actor) || operator;
        if let (
            true,
            true,
            Call::Install {
                resource,
                generation,
            }
            | Call::Restore {
                resource,
                generation,
            },
        ) = (installing, committed, &call)
        {
            log.installed.insert(resource.clone(), *generation);
        }
        let installed = log.installed.get(call.resource()).copied();
        if log.events.len() < MOST_EVENTS {
            log.events.push(Event::Ended {
                actor,
                committed,
                wrote,
                installed,
            });
        }
    }

    /// Where the events stand now, for [`Trace::resumed`].
    #[doc(hidden)]
    pub fn mark(&self) -> usize {
        self.log().events.len()
    }

    /// Connection `actor` goes on after a test's hook held it at a
    /// checkpoint: if another connection acted meanwhile (since `mark`),
    /// that is said.
    #[doc(hidden)]
    pub fn resumed(&self, actor: usize, mark: usize) {
        let mut log = self.log();
        let others = log
            .events
            .get(mark..)
            .is_some_and(|since| since.iter().any(|event| event.actor() != actor));
        if others && log.events.len() < MOST_EVENTS {
            log.events.push(Event::Resumed { actor });
        }
    }

    /// The events so far, and what the test calls each connection: what a
    /// failed step carries.
    pub fn run(&self) -> (Vec<Event>, Vec<(usize, String)>) {
        (self.events(), self.names())
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Event> {
        self.log().events.clone()
    }

    /// Forgets the events, as a lab put back to its start does; the
    /// generations start again at `start`.
    pub fn restart(&self, start: &[(&str, i64)]) {
        let mut log = self.log();
        log.events.clear();
        log.installing.clear();
        log.writing.clear();
        log.installed = start
            .iter()
            .map(|&(resource, generation)| (resource.to_owned(), generation))
            .collect();
    }
}

/// Reading a step's words into facts: the one place that does.
pub mod words {
    use super::{Answer, Met, Observed, Pause, Recorded};

    /// The words of the checkpoint between two transactions of one call,
    /// as its `Display` prints them; a step that paused there names them.
    pub const TRANSACTION_ENDED: &str = "after one of its transactions ended";

    /// What a step says when the test's install got in while the call was
    /// paused at a read.
    pub const INSTALL_GOT_IN: &str = "and another install got in";

    /// The words a step ends with when the worker's own temporary
    /// relations, named like the lab's tables, are in place (lesson L8).
    pub const WORKER_TEMPORARY_RELATIONS: &str = "with the worker's temporary relations in place";

    /// Where a step's name says the call was held.
    pub fn pauses(step: &str) -> Vec<Pause> {
        let says = [
            (TRANSACTION_ENDED, Pause::BetweenTransactions),
            (INSTALL_GOT_IN, Pause::InstallGotIn),
            ("ran to its end", Pause::OtherRanToEnd),
            (WORKER_TEMPORARY_RELATIONS, Pause::WorkerRelations),
        ];
        let mut pauses: Vec<Pause> = says
            .iter()
            .filter(|(words, _)| step.contains(words))
            .map(|&(_, pause)| pause)
            .collect();
        if step.contains("while") && step.contains("paused") {
            pauses.push(Pause::OthersActed);
        }
        if step.contains("paused") {
            pauses.push(Pause::Held);
        }
        pauses
    }

    /// What a line says, as an observation.
    pub fn observed(line: &str) -> Observed {
        let line = line.lines().next().unwrap_or_default();
        let answer = answer(line);
        if answer != Answer::Other {
            return Observed::Answer(answer);
        }
        if line.starts_with("(never reached") {
            return Observed::NeverReached;
        }
        let met = met(line);
        if !met.is_empty() {
            return Observed::Met(met);
        }
        if let Some(answers) = answers(line) {
            return answers;
        }
        if let Some(records) = records(line) {
            return Observed::records(records);
        }
        if let Some((generation, value)) = state(line) {
            return Observed::State { generation, value };
        }
        Observed::Words
    }

    /// What one answer says.
    pub fn answer(line: &str) -> Answer {
        let number = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit() && c != '-').next())
                .and_then(|digits| digits.parse().ok())
        };
        if let Some(result) = number("applied, result ") {
            return Answer::Applied(result);
        }
        if let Some(result) = number("replayed, original result ") {
            return Answer::Replayed(result);
        }
        if line.contains("is not implemented yet") {
            return Answer::NotImplemented;
        }
        if line.contains(" panicked: ") {
            return Answer::Panicked;
        }
        let lower = line.to_lowercase();
        let is = |text: &str| lower.starts_with(text);
        if line == "installed" {
            Answer::Installed
        } else if is("acquired") {
            Answer::Acquired
        } else if is("rejected: stale generation") {
            Answer::Stale(numbers(line))
        } else if is("rejected: generation never issued") {
            Answer::NeverIssued(numbers(line))
        } else if is("rejected: generation not higher") {
            Answer::NotHigher
        } else if is("rejected: conflicting request") {
            Answer::Conflict
        } else if is("rejected: unknown resource") {
            Answer::Unknown
        } else if is("rejected: value overflow") {
            Answer::Overflow
        } else if is("rejected: request id too long") {
            Answer::IdTooLong
        } else if is("rejected: empty request id") || is("rejected: generation must be") {
            Answer::BadInput
        } else if is("injected fault") {
            Answer::Fault
        } else if is("contention") || is("serialization failure") {
            Answer::Contention
        } else if lower.contains("unique constraint") || lower.contains("duplicate key") {
            // Anywhere in the line: an explorer's list of what each actor
            // was answered carries it after the actor's name.
            Answer::DuplicateKey
        } else if is("not allowed in the lab") {
            Answer::NotAllowed
        } else if is("database error") || is("postgresql error") {
            Answer::DatabaseError
        } else {
            Answer::Other
        }
    }

    /// `presented P, installed I` in a refusal by generation.
    fn numbers(line: &str) -> Option<(i64, i64)> {
        let number = |after: &str| {
            let (_, rest) = line.split_once(after)?;
            rest.split(|c: char| !c.is_ascii_digit() && c != '-')
                .next()?
                .parse::<i64>()
                .ok()
        };
        Some((number("presented ")?, number("installed ")?))
    }

    /// `generation G, value V`.
    fn state(line: &str) -> Option<(i64, i64)> {
        let (generation, value) = line.strip_prefix("generation ")?.split_once(", value ")?;
        Some((generation.parse().ok()?, value.parse().ok()?))
    }

    /// What a test met while a call was paused, part by part: `probe: …`,
    /// `install fund-A: …`, `apply: …`.
    fn met(line: &str) -> Vec<Met> {
        line.split("; ")
            .filter_map(|part| part.split_once(": "))
            .filter(|(what, _)| {
                ["probe", "install", "apply", "the authority", "worker"]
                    .iter()
                    .any(|actor| {
                        what == actor
                            || what.starts_with(&format!("{actor} "))
                            || what.starts_with(&format!("{actor}'"))
                    })
            })
            .map(|(actor, met)| Met {
                actor: actor.to_owned(),
                answer: answer(met),
            })
            .collect()
    }

    /// What several callers were answered (`r1 -> applied, result 5; r2 ->
    /// …; value 15`), with the value after if named; `None` for a line that
    /// does not list answers.
    fn answers(line: &str) -> Option<Observed> {
        if !line.contains(" -> ") {
            return None;
        }
        let mut answers = Vec::new();
        let mut value = None;
        for part in line.split("; ") {
            if let Some((who, said)) = part.split_once(" -> ") {
                answers.push((who.to_owned(), answer(said)));
            } else if let Some(rest) = part.strip_prefix("value ") {
                value = rest.split([' ', '(']).next().and_then(|v| v.parse().ok());
            }
        }
        Some(Observed::Answers { answers, value })
    }

    /// The records a line names: the part after `records: ` (or `one
    /// record: `) where a line tells more than records, each record less a
    /// note in brackets that follows it (`(or r2-1 first)`).
    fn records(line: &str) -> Option<Vec<Recorded>> {
        let after = |marker: &str| line.split_once(marker).map(|(_, after)| after);
        let list = after("records: ")
            .or_else(|| after("record: "))
            .unwrap_or(line);
        if list.starts_with("no records") || list == "none" {
            return Some(Vec::new());
        }
        let found: Vec<Recorded> = list
            .split("; ")
            .filter_map(|record| record.split(" (").next())
            .filter_map(|record| recorded(record.trim()))
            .collect();
        (!found.is_empty()).then_some(found)
    }

    /// `fund-A r1 delta +5 result 5 generation 1`.
    fn recorded(record: &str) -> Option<Recorded> {
        let (who, numbers) = record.rsplit_once(" delta ")?;
        let (resource, request_id) = who.split_once(' ')?;
        let mut words = numbers.split(' ');
        let delta = words.next()?.trim_start_matches('+').parse().ok()?;
        let (_, result) = (words.next()?, words.next()?.parse().ok()?);
        let (_, generation) = (words.next()?, words.next()?.parse().ok()?);
        Some(Recorded {
            resource: resource.to_owned(),
            request_id: request_id.to_owned(),
            delta,
            result,
            generation,
        })
    }

    /// The part of a step's two lines that tells them apart: their first
    /// lines (what follows is the test's detail, such as a crash test's
    /// trials), less a child process's `apply returned `, and of answers
    /// joined by ` and ` (a model's step that delivered twice) the first
    /// pair that differs; of the answers of several callers, the first
    /// caller answered otherwise, less its name.
    pub fn first_difference<'a>(expected: &'a str, got: &'a str) -> (&'a str, &'a str) {
        let first = |line: &'a str| {
            let line = line.lines().next().unwrap_or_default();
            line.strip_prefix("apply returned ").unwrap_or(line)
        };
        let (expected, got) = (first(expected), first(got));
        let (expected, got) = expected
            .split(" and ")
            .zip(got.split(" and "))
            .find(|(expected, got)| expected != got)
            .unwrap_or((expected, got));
        if !(expected.contains(" -> ") && got.contains(" -> ")) {
            return (expected, got);
        }
        let answer = |part: &'a str| part.split_once(" -> ").map_or(part, |(_, answer)| answer);
        expected
            .split("; ")
            .zip(got.split("; "))
            .find(|(expected, got)| expected != got && expected.contains(" -> "))
            .map_or((expected, got), |(expected, got)| {
                (answer(expected), answer(got))
            })
    }
}

/// The events of a failing call as one line, for the grader's verdict
/// channel (`tests/lab/verdict.rs`), which draws them: records split by
/// `;`, fields by `,`, and those two, `%` and a line break written as
/// `%3B`, `%2C`, `%25` and `%0A` inside a field.
pub mod wire {
    use super::{Answer, Call, Checkpoint, Coordination, Event};

    /// Every checkpoint, by the name the line gives it.
    const CHECKPOINTS: [(Checkpoint, &str); 9] = [
        (Checkpoint::CallStarted, "started"),
        (Checkpoint::GenerationRead, "generation-read"),
        (Checkpoint::RecordRead, "record-read"),
        (Checkpoint::ValueRead, "value-read"),
        (Checkpoint::BeforeEffect, "before-effect"),
        (Checkpoint::BeforeRecord, "before-record"),
        (Checkpoint::BeforeInstall, "before-install"),
        (Checkpoint::TransactionEnded, "transaction-ended"),
        (Checkpoint::WorkerChecked, "worker-checked"),
    ];

    /// What the test calls each connection, and the events: what a line
    /// carries.
    pub type Run = (Vec<(usize, String)>, Vec<Event>);

    /// `names` and `events` as one line.
    pub fn encode(names: &[(usize, String)], events: &[Event]) -> String {
        let mut records: Vec<String> = names
            .iter()
            .map(|(actor, name)| format!("N,{actor},{}", field(name)))
            .collect();
        records.extend(events.iter().map(event));
        records.join(";")
    }

    /// What [`encode`] wrote, or `None` for a line it did not write.
    pub fn decode(line: &str) -> Option<Run> {
        let (mut names, mut events) = (Vec::new(), Vec::new());
        for record in line.split(';').filter(|record| !record.is_empty()) {
            let fields: Vec<String> = record.split(',').map(unfield).collect();
            let number = |i: usize| fields.get(i)?.parse::<i64>().ok();
            let actor = fields.get(1)?.parse::<usize>().ok()?;
            match fields[0].as_str() {
                "N" => names.push((actor, fields.get(2)?.clone())),
                "C" => events.push(Event::Called {
                    actor,
                    call: match fields.get(2)?.as_str() {
                        "apply" => Call::Apply {
                            resource: fields.get(3)?.clone(),
                            generation: number(4)?,
                            request_id: fields.get(5)?.clone(),
                            delta: number(6)?,
                        },
                        "install" => Call::Install {
                            resource: fields.get(3)?.clone(),
                            generation: number(4)?,
                        },
                        "direct" => Call::DirectWrite {
                            resource: fields.get(3)?.clone(),
                            value: number(4)?,
                        },
                        "restore" => Call::Restore {
                            resource: fields.get(3)?.clone(),
                            generation: number(4)?,
                        },
                        _ => return None,
                    },
                }),
                "R" => {
                    let name = fields.get(2)?;
                    let at = CHECKPOINTS
                        .iter()
                        .find(|(_, known)| known == name)
                        .map(|&(checkpoint, _)| checkpoint)?;
                    events.push(Event::Reached { actor, at });
                }
                "E" => events.push(Event::Ended {
                    actor,
                    committed: fields.get(2)? == "commit",
                    wrote: fields.get(3)? == "wrote",
                    installed: number(4),
                }),
                "G" => events.push(Event::Resumed { actor }),
                "K" => {
                    let worker = fields.get(3).and_then(|w| w.parse::<usize>().ok());
                    let what = match (fields.get(2)?.as_str(), worker) {
                        ("locked", None) => Coordination::Locked,
                        ("froze", Some(worker)) => Coordination::Froze { worker },
                        ("lease-ended", Some(worker)) => Coordination::LeaseEnded { worker },
                        ("woke", Some(worker)) => Coordination::Woke { worker },
                        ("killed", Some(worker)) => Coordination::Killed { worker },
                        ("leader-replaced", None) => Coordination::LeaderReplaced,
                        _ => return None,
                    };
                    events.push(Event::Coordinated { actor, what });
                }
                "A" => events.push(Event::Answered {
                    actor,
                    answer: answer_of(&fields[2..])?,
                }),
                _ => return None,
            }
        }
        Some((names, events))
    }

    fn event(event: &Event) -> String {
        match event {
            Event::Called {
                actor,
                call:
                    Call::Apply {
                        resource,
                        generation,
                        request_id,
                        delta,
                    },
            } => format!(
                "C,{actor},apply,{},{generation},{},{delta}",
                field(resource),
                field(request_id)
            ),
            Event::Called {
                actor,
                call:
                    Call::Install {
                        resource,
                        generation,
                    },
            } => format!("C,{actor},install,{},{generation}", field(resource)),
            Event::Called {
                actor,
                call: Call::DirectWrite { resource, value },
            } => format!("C,{actor},direct,{},{value}", field(resource)),
            Event::Called {
                actor,
                call:
                    Call::Restore {
                        resource,
                        generation,
                    },
            } => format!("C,{actor},restore,{},{generation}", field(resource)),
            Event::Reached { actor, at } => {
                let name = CHECKPOINTS
                    .iter()
                    .find(|(checkpoint, _)| checkpoint == at)
                    .map_or("started", |(_, name)| name);
                format!("R,{actor},{name}")
            }
            Event::Ended {
                actor,
                committed,
                wrote,
                installed,
            } => format!(
                "E,{actor},{},{},{}",
                if *committed { "commit" } else { "rollback" },
                if *wrote { "wrote" } else { "read" },
                installed.map_or_else(|| "-".to_owned(), |g| g.to_string())
            ),
            Event::Resumed { actor } => format!("G,{actor}"),
            Event::Coordinated { actor, what } => match what {
                Coordination::Locked => format!("K,{actor},locked"),
                Coordination::Froze { worker } => format!("K,{actor},froze,{worker}"),
                Coordination::LeaseEnded { worker } => format!("K,{actor},lease-ended,{worker}"),
                Coordination::Woke { worker } => format!("K,{actor},woke,{worker}"),
                Coordination::Killed { worker } => format!("K,{actor},killed,{worker}"),
                Coordination::LeaderReplaced => format!("K,{actor},leader-replaced"),
            },
            Event::Answered { actor, answer } => format!("A,{actor},{}", answer_fields(answer)),
        }
    }

    fn answer_fields(answer: &Answer) -> String {
        match answer {
            Answer::Applied(result) => format!("applied,{result}"),
            Answer::Replayed(result) => format!("replayed,{result}"),
            Answer::Stale(Some((p, i))) => format!("stale,{p},{i}"),
            Answer::NeverIssued(Some((p, i))) => format!("never-issued,{p},{i}"),
            other => ANSWERS
                .iter()
                .find(|(known, _)| known == other)
                .map_or("other", |(_, name)| name)
                .to_owned(),
        }
    }

    fn answer_of(fields: &[String]) -> Option<Answer> {
        let number = |i: usize| fields.get(i)?.parse::<i64>().ok();
        Some(match fields.first()?.as_str() {
            "applied" => Answer::Applied(number(1)?),
            "replayed" => Answer::Replayed(number(1)?),
            "stale" => Answer::Stale(number(1).zip(number(2))),
            "never-issued" => Answer::NeverIssued(number(1).zip(number(2))),
            name => ANSWERS
                .iter()
                .find(|(_, known)| *known == name)
                .map(|(answer, _)| answer.clone())?,
        })
    }

    /// The answers that carry no numbers, by name.
    const ANSWERS: [(Answer, &str); 19] = [
        (Answer::Installed, "installed"),
        (Answer::Written, "written"),
        (Answer::Acquired, "acquired"),
        (Answer::Stale(None), "stale"),
        (Answer::NeverIssued(None), "never-issued"),
        (Answer::NotHigher, "not-higher"),
        (Answer::Conflict, "conflict"),
        (Answer::Unknown, "unknown"),
        (Answer::Overflow, "overflow"),
        (Answer::BadInput, "bad-input"),
        (Answer::IdTooLong, "id-too-long"),
        (Answer::Fault, "fault"),
        (Answer::Contention, "contention"),
        (Answer::DuplicateKey, "duplicate-key"),
        (Answer::DatabaseError, "database-error"),
        (Answer::NotAllowed, "not-allowed"),
        (Answer::NotImplemented, "not-implemented"),
        (Answer::Panicked, "panicked"),
        (Answer::Other, "other"),
    ];

    fn field(text: &str) -> String {
        text.replace('%', "%25")
            .replace(';', "%3B")
            .replace(',', "%2C")
            .replace('\n', "%0A")
    }

    fn unfield(text: &str) -> String {
        text.replace("%0A", "\n")
            .replace("%2C", ",")
            .replace("%3B", ";")
            .replace("%25", "%")
    }
}
