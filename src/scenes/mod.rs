//! The lab's scenes, each written once: who does what, at which checkpoint,
//! and what the destination must answer. A scene reports every step to an
//! [`Observer`]:
//!
//! - the graded test (`tests/lab/`) observes with its claim's check, which
//!   fails the test at the first step whose outcome differs from the
//!   expected one, and ignores the story's lines;
//! - the story ([`crate::story`], `cargo run` and the transcript snapshots)
//!   observes with a narrator, which writes each step as the learner's code
//!   answered it and stops the lesson at the first step that differs.
//!
//! So the story always shows what the code under test did. A scene with
//! several cases in the tests (a journal mode, a checkpoint) is told in the
//! story with one of them.
//!
//! One file per lesson: [`l1`] to [`l6`], `l7` for the etcd track's workers
//! in processes of their own (feature `etcd`), and `pg` for what only the
//! PostgreSQL server shows (feature `postgres`), `l8` for what the
//! database enforces itself (feature `postgres-sql`).

use std::cell::RefCell;
use std::fmt::{self, Display};
use std::rc::Rc;

use crate::checkpoint::Checkpoint;
use crate::claims::facts::{Answer, Event, Facts, Met, Observed, Pause};
use crate::transcript::{Halt, records_line};
use crate::{LabError, Session, Store, describe, describe_error};

pub mod expect;
pub mod l1;
pub mod l2;
pub mod l3;
pub mod l4;
pub mod l5;
pub mod l6;
#[cfg(feature = "etcd")]
pub mod l7;
#[cfg(feature = "postgres-sql")]
pub mod l8;
#[cfg(feature = "postgres")]
pub mod pg;

/// The resource most scenes act on.
pub const A: &str = "fund-A";
/// The other resource every lab starts with.
pub const B: &str = "fund-B";

/// A request id as a step names it: quoted, and past 80 bytes its first
/// 24 characters and its length (a step names the call; what the
/// destination kept is compared byte for byte elsewhere).
pub fn shown_id(request_id: &str) -> String {
    if request_id.len() <= 80 {
        return format!("{request_id:?}");
    }
    let start: String = request_id.chars().take(24).collect();
    format!("{start:?}… ({} bytes)", request_id.len())
}

/// The variable that asks for every step's run, passed or failed: the
/// test support writes each to the file it names (`cargo xtask
/// reference-runs` keeps the reference's, which a failure's report draws
/// beside the learner's). Unset, only a failed step carries its run.
pub const REFERENCE_RUNS: &str = "FENCING_LAB_REFERENCE_RUNS";

/// Whether every step carries the lab's events, not only a failed one
/// ([`REFERENCE_RUNS`] is set).
pub fn keeps_every_run() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| std::env::var_os(REFERENCE_RUNS).is_some())
}

/// One checked step of a scene: what was done, what the claim expects, what
/// came of it.
#[derive(Debug)]
pub struct Step {
    /// What the scene did (`apply(fund-A, generation 1, "r1", +5)`), as a
    /// test's failure prints it.
    pub name: String,
    /// The outcome the claim expects.
    pub expected: String,
    /// The outcome the code under test produced.
    pub got: String,
    /// Whether the step failed: `got` is not `expected`, or the scene said
    /// so ([`Stage::fail`]).
    pub failed: bool,
    /// Why the destination's checkpoints could not see the call, if they
    /// could not (see [`Session::unobserved`]).
    pub unobserved: Option<&'static str>,
    /// Where the test held the call and what it did meanwhile, as the
    /// scene knows it.
    pub pauses: Vec<Pause>,
    /// What the code under test produced, as data, where the scene holds
    /// it so (a call's answer, the observer's state and records, what the
    /// actors met while the call was paused).
    pub got_fact: Option<Observed>,
    /// What the lab's connections did up to a failed step, and what the
    /// test calls them (taken only when the step failed, or when
    /// [`keeps_every_run`]).
    pub events: (Vec<Event>, Vec<(usize, String)>),
    /// Whether `events` are one whole schedule of an exploration, to be
    /// told whole.
    pub whole: bool,
}

impl Step {
    /// A step that failed when `got` is not `expected`.
    pub fn compared(name: impl Display, expected: impl Display, got: impl Display) -> Step {
        let (expected, got) = (expected.to_string(), got.to_string());
        Step {
            name: name.to_string(),
            failed: expected != got,
            expected,
            got,
            unobserved: None,
            pauses: Vec::new(),
            got_fact: None,
            events: (Vec::new(), Vec::new()),
            whole: false,
        }
    }

    /// What happened in this step, as data: what the scene holds as data,
    /// the rest read from the step's words ([`Facts::read`]).
    pub fn facts(&self) -> Facts {
        let facts = Facts::read(&self.name, &self.expected, &self.got);
        let facts = match &self.got_fact {
            Some(got) => facts.with_got(got.clone()),
            None => facts,
        };
        let facts = Facts {
            events: self.events.0.clone(),
            names: self.events.1.clone(),
            whole: self.whole,
            ..facts
        };
        if self.pauses.is_empty() {
            return facts;
        }
        Facts {
            pauses: self.pauses.clone(),
            ..facts
        }
    }

    /// This step, taken where the test held the call as `pause` says (a
    /// call held at a checkpoint, unless `pause` is a setting).
    #[must_use]
    pub fn at(mut self, pause: Pause) -> Step {
        if pause != Pause::WorkerRelations && !self.pauses.contains(&Pause::Held) {
            self.pauses.push(Pause::Held);
        }
        self.pauses.push(pause);
        self
    }

    /// This step, with one whole schedule of an exploration as what
    /// happened.
    #[must_use]
    pub fn schedule(self, events: &(Vec<Event>, Vec<(usize, String)>)) -> Step {
        Step {
            events: events.clone(),
            whole: true,
            ..self
        }
    }

    /// This step, with what the code under test produced as data.
    #[must_use]
    pub fn got(self, got: Observed) -> Step {
        Step {
            got_fact: Some(got),
            ..self
        }
    }

    /// A step that failed, whatever its two lines say.
    pub fn failed(name: impl Display, expected: impl Display, got: impl Display) -> Step {
        Step {
            failed: true,
            ..Step::compared(name, expected, got)
        }
    }
}

/// What a scene reports to: the story's narrator or a graded test's check.
pub trait Observer {
    /// A line of the story: what `role` did under `claim`, and what came of
    /// it. A test has nothing to do with it.
    fn line(&self, claim: &str, role: &str, text: &str) {
        let _ = (claim, role, text);
    }

    /// A step of `claim` whose outcome the claim fixes. `Ok` lets the scene
    /// go on; an error stops it. (A graded test fails right here instead.)
    fn check(&self, claim: &'static str, step: Step) -> Result<(), Halt>;

    /// A line of prose between scenes, which explains what comes next. A
    /// test has nothing to do with it.
    fn note(&self, text: &str) {
        let _ = text;
    }

    /// `step` of `claim` could not be played here (a process the harness
    /// could not start, a cluster it could not reach): not a verdict on the
    /// code under test. The scene stops with the returned halt; a graded
    /// test fails right here as NOT CHECKED instead.
    fn not_checked(&self, claim: &'static str, step: &str, why: &str) -> Halt {
        let _ = claim;
        Halt(format!("not checked: {step}: {why}"))
    }
}

/// One scene in progress: the claim it proves, the lab it runs on, and the
/// observer it reports to.
pub struct Stage<'o, S: Store> {
    observer: &'o dyn Observer,
    claim: &'static str,
    /// The lab the scene runs on.
    pub lab: S,
    paused: Paused,
}

impl<'o, S: Store> Stage<'o, S> {
    /// A scene of `claim` on `lab`, reported to `observer`.
    pub fn new(observer: &'o dyn Observer, claim: &'static str, lab: &S) -> Self {
        Stage {
            observer,
            claim,
            lab: lab.clone(),
            paused: Paused::default(),
        }
    }

    /// The same lab and observer under another claim (a scene that shows
    /// two claims at once).
    pub fn under(&self, claim: &'static str) -> Stage<'o, S> {
        Stage {
            observer: self.observer,
            claim,
            lab: self.lab.clone(),
            paused: self.paused.clone(),
        }
    }

    /// A new connection to the lab.
    pub fn connect(&self) -> Result<S::Session, Halt> {
        Ok(self.lab.connect()?)
    }

    /// What checkpoint hooks write to while a call is paused: its lines
    /// join the story right before the paused call's own.
    pub fn paused(&self) -> Paused {
        self.paused.clone()
    }

    /// A line of the story, not checked.
    pub fn say(&self, role: &str, text: impl Display) {
        self.flush();
        self.observer.line(self.claim, role, &text.to_string());
    }

    /// `step` could not be played here, as [`Observer::not_checked`] says;
    /// the scene stops with the halt this returns.
    pub fn not_checked(&self, step: impl Display, why: impl Display) -> Halt {
        self.flush();
        self.observer
            .not_checked(self.claim, &step.to_string(), &why.to_string())
    }

    /// Tells the lines that hooks wrote since the last line (every other
    /// method of the stage tells them first).
    pub fn flush(&self) {
        let lines = std::mem::take(&mut self.paused.0.borrow_mut().lines);
        for (claim, role, text) in lines {
            self.observer
                .line(claim.unwrap_or(self.claim), &role, &text);
        }
    }

    /// A step that the story does not tell unless it fails.
    pub fn same(
        &self,
        step: impl Display,
        expected: impl Display,
        got: impl Display,
    ) -> Result<(), Halt> {
        self.report(Step::compared(step, expected, got))
    }

    /// A step that failed, whatever its two lines say.
    pub fn fail(
        &self,
        step: impl Display,
        expected: impl Display,
        got: impl Display,
    ) -> Result<(), Halt> {
        self.report(Step::failed(step, expected, got))
    }

    /// Reports a step, after the story's pending lines; a failed one with
    /// what the lab's connections did up to it.
    pub fn report(&self, step: Step) -> Result<(), Halt> {
        self.flush();
        let step = match (step.failed || keeps_every_run(), self.lab.trace()) {
            (true, Some(trace)) => Step {
                events: trace.run(),
                ..step
            },
            _ => step,
        };
        self.observer.check(self.claim, step)
    }

    /// What the hooks saw while `db`'s last call was paused (as
    /// [`Paused::saw`] recorded it, joined by `; `) must read `expected`.
    pub fn while_paused(
        &self,
        db: &impl Session,
        step: impl Display,
        expected: impl Display,
    ) -> Result<(), Halt> {
        let (got, met) = self.paused.take_seen();
        let step = Step {
            unobserved: db.unobserved(),
            ..Step::compared(step, expected, got).at(Pause::OthersActed)
        };
        self.report(match met {
            Some(met) => step.got(met),
            None => step,
        })
    }

    /// `role` asks `db` to apply; the answer must read `expected`.
    pub fn apply(
        &self,
        role: &str,
        db: &mut impl Session,
        (resource, generation, request_id, delta): (&str, i64, &str, i64),
        expected: impl Display,
    ) -> Result<(), Halt> {
        let result = db.apply(resource, generation, request_id, delta);
        let request_id = shown_id(request_id);
        let step = format!("apply({resource}, generation {generation}, {request_id}, {delta:+})");
        let step = Step::compared(step, expected, describe(&result));
        self.told(
            role,
            db,
            step.got(Observed::Answer(expect::answer(&result))),
        )
    }

    /// `role` installs `generation` on `resource` through `db`; the answer
    /// must read `expected`.
    pub fn install(
        &self,
        role: &str,
        db: &mut impl Session,
        resource: &str,
        generation: i64,
        expected: impl Display,
    ) -> Result<(), Halt> {
        let result = db.install_generation(resource, generation);
        let step = format!("install_generation({resource}, {generation})");
        let step = Step::compared(step, expected, expect::describe_install(&result));
        self.told(
            role,
            db,
            step.got(Observed::Answer(expect::install_answer(&result))),
        )
    }

    /// The lab's events call `db` `role` from now on.
    pub fn name(&self, db: &impl Session, role: &str) {
        if let Some((trace, actor)) = db.traced() {
            trace.name(actor, role);
        }
    }

    /// A call's line, `step -> got`, then its check; the lab's events call
    /// `db` `role` from now on.
    pub fn told(&self, role: &str, db: &impl Session, step: Step) -> Result<(), Halt> {
        self.name(db, role);
        self.say(role, format_args!("{} -> {}", step.name, step.got));
        self.report(Step {
            unobserved: db.unobserved(),
            ..step
        })
    }

    /// The observer's view of `resource` must be `generation` and `value`;
    /// not told.
    pub fn state(&self, resource: &str, generation: i64, value: i64) -> Result<(), Halt> {
        let got = self.lab.state(resource)?;
        self.report(
            Step::compared(
                format_args!("observe {resource}"),
                format_args!("generation {generation}, value {value}"),
                got,
            )
            .got(expect::state_fact(&got)),
        )
    }

    /// Every record of `resource`, each as [`expect::rec`] spells it; not
    /// told.
    pub fn records(&self, resource: &str, expected: &[String]) -> Result<(), Halt> {
        let records = self.lab.records(resource)?;
        let got: Vec<String> = records.iter().map(ToString::to_string).collect();
        self.report(
            Step::compared(
                format_args!("records of {resource}"),
                expect::list(expected),
                expect::list(&got),
            )
            .got(expect::records_fact(&records)),
        )
    }

    /// The observer reads `resource` out (a line of the story), then its
    /// state and its records are checked as [`Stage::state`] and
    /// [`Stage::records`] check them.
    pub fn observe(
        &self,
        resource: &str,
        generation: i64,
        value: i64,
        records: &[String],
    ) -> Result<(), Halt> {
        self.tell_state(resource)?;
        self.state(resource, generation, value)?;
        self.records(resource, records)
    }

    /// The observer reads `resource` out: a line of the story, not checked.
    pub fn tell_state(&self, resource: &str) -> Result<(), Halt> {
        let state = self.lab.state(resource)?;
        let records = records_line(&self.lab.records(resource)?);
        self.say("observer", format_args!("{resource}: {state}; {records}"));
        Ok(())
    }
}

/// What checkpoint hooks saw while a call was paused: the story's lines,
/// and the same outcomes as a test compares them (`probe: ...; install:
/// ...`). Clones share both, so a hook (which must be `'static`) can write
/// while the scene reads.
#[derive(Clone, Default)]
pub struct Paused(Rc<RefCell<PausedLines>>);

#[derive(Default)]
struct PausedLines {
    lines: Vec<(Option<&'static str>, String, String)>,
    /// Each outcome's words, and what the actor met as data where the
    /// hook held it so.
    seen: Vec<(String, Option<Met>)>,
}

impl Paused {
    /// A line of the story, told before the paused call's own.
    pub fn say(&self, role: &str, text: impl Display) {
        self.0
            .borrow_mut()
            .lines
            .push((None, role.to_owned(), text.to_string()));
    }

    /// A line of the story under another claim than the scene's (what the
    /// pause shows about a claim of its own).
    pub fn say_under(&self, claim: &'static str, role: &str, text: impl Display) {
        self.0
            .borrow_mut()
            .lines
            .push((Some(claim), role.to_owned(), text.to_string()));
    }

    /// An outcome a check compares (`probe: acquired the write lock`).
    pub fn saw(&self, seen: impl Into<String>) {
        self.0.borrow_mut().seen.push((seen.into(), None));
    }

    /// What `actor` met while the call was paused: `answer`, which reads
    /// `words`; a check compares `actor: words`.
    pub fn met(&self, actor: &str, answer: Answer, words: &str) {
        self.0.borrow_mut().seen.push((
            format!("{actor}: {words}"),
            Some(Met {
                actor: actor.to_owned(),
                answer,
            }),
        ));
    }

    /// Whether `seen` is among the outcomes so far.
    fn has_seen(&self, seen: &str) -> bool {
        self.0.borrow().seen.iter().any(|(line, _)| line == seen)
    }

    /// The outcomes so far, joined by `; `, and what the actors met as
    /// data where every one was held so; forgets them.
    fn take_seen(&self) -> (String, Option<Observed>) {
        let seen = std::mem::take(&mut self.0.borrow_mut().seen);
        if seen.is_empty() {
            let words = "(never reached: the call returned before it got there)";
            return (words.to_owned(), Some(Observed::NeverReached));
        }
        let words: Vec<&str> = seen.iter().map(|(line, _)| line.as_str()).collect();
        let met: Option<Vec<Met>> = seen.iter().map(|(_, met)| met.clone()).collect();
        (words.join("; "), met.map(Observed::Met))
    }
}

/// Runs `action` the first time `db` reaches `at`; the destination waits
/// there, holding whatever locks it holds, until `action` returns.
pub fn pause_at(
    db: &mut impl Session,
    at: Checkpoint,
    action: impl FnOnce() -> Result<(), LabError> + 'static,
) {
    let mut action = Some(action);
    db.on_checkpoint(
        move |checkpoint| match action.take_if(|_| checkpoint == at) {
            Some(action) => action(),
            None => Ok(()),
        },
    );
}

/// While paused: is the write lock free? And may the authority install?
/// Both go to `paused` as the story's lines; the install's outcome also as
/// "install: ...", which the scene judges. The probe is told, not judged:
/// what counts is whether the install got in, and what the paused call
/// then did with it.
///
/// Nothing here becomes the paused call's result: whatever the probe or the
/// authority meets (an exclusive lock may keep a new connection from even
/// reading the schema) is what `paused` records, and the action lets the
/// paused call go on.
pub fn probe_and_install(
    lab: &crate::Lab,
    paused: &Paused,
    resource: &str,
    generation: i64,
) -> Result<(), LabError> {
    probe(lab, paused);
    install_while_paused(lab, paused, resource, generation);
    Ok(())
}

/// While paused: the authority installs `generation` on a connection of
/// its own, on either destination. Its outcome goes to `paused` as
/// "install: ...".
pub fn install_while_paused<S: Store>(lab: &S, paused: &Paused, resource: &str, generation: i64) {
    let install = lab.connect().and_then(|mut authority| {
        if let Some((trace, actor)) = authority.traced() {
            trace.name(actor, "authority");
        }
        authority.install_generation(resource, generation)
    });
    let answer = expect::install_answer(&install);
    let install = expect::describe_install(&install);
    paused.say(
        "authority",
        format_args!("install_generation({resource}, {generation}) -> {install}"),
    );
    paused.met("install", answer, &install);
}

/// While paused: a plain `BEGIN IMMEDIATE` on a connection of its own. Is
/// the write lock free right now? A line of the story, not an outcome.
pub fn probe(lab: &crate::Lab, paused: &Paused) {
    let probe = match lab.probe_write_lock() {
        Ok(()) => "acquired the write lock".to_owned(),
        Err(error) => describe_error(&error),
    };
    paused.say("probe", format_args!("BEGIN IMMEDIATE -> {probe}"));
}

/// While paused: may `role` apply, on a connection of its own? Its outcome
/// goes to `paused` as "apply: ...", like [`probe_and_install`]'s.
pub fn try_apply(
    lab: &crate::Lab,
    paused: &Paused,
    role: &str,
    (resource, generation, request_id, delta): (&str, i64, &str, i64),
) {
    let apply = lab.connect().and_then(|mut worker| {
        if let Some((trace, actor)) = worker.traced() {
            trace.name(actor, role);
        }
        worker.apply(resource, generation, request_id, delta)
    });
    let answer = expect::answer(&apply);
    let apply = describe(&apply);
    let request_id = shown_id(request_id);
    paused.say(
        role,
        format_args!(
            "apply({resource}, generation {generation}, {request_id}, {delta:+}) -> {apply}"
        ),
    );
    paused.met("apply", answer, &apply);
}

/// `apply is not implemented yet: open exercises/apply.rs`, the first such
/// phrase of a line that may list what several calls were answered; `None`
/// if no call met an unfinished stub.
pub fn stub_phrase(got: &str) -> Option<&str> {
    const NOT_YET: &str = " is not implemented yet: open ";
    let at = got.find(NOT_YET)?;
    let start = got[..at].rfind([' ', '>']).map_or(0, |space| space + 1);
    let end = got[at..]
        .find([';', '\n'])
        .map_or(got.len(), |end| at + end);
    Some(&got[start..end])
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n  expected: {}\n  got:      {}",
            self.name, self.expected, self.got
        )
    }
}
