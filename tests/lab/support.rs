//! What every graded test shares: a fresh lab, the expected outcomes spelled
//! the way the transcript spells them, and one `Check` per claim whose
//! failures say which claim broke, what was expected, and which file to open.

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fencing_lab::claims::facts::{Facts, Observed};
use fencing_lab::claims::{self, Claim, Track, hints};
use fencing_lab::scenes::{self, Observer, Step};
use fencing_lab::transcript::Halt;
use fencing_lab::{Journal, Lab, Record, Session, Store, describe};
use rstest::fixture;

// The outcomes a claim expects, spelled as the scenes spell them.
pub use fencing_lab::scenes::expect::*;
pub use fencing_lab::scenes::{A, B};

/// A fresh lab in the rollback-journal mode, in its own temp directory.
#[fixture]
pub fn lab() -> Lab {
    wire();
    Lab::new(Journal::Rollback).expect("the harness creates a lab")
}

/// The checks of one claim on one destination. Every failure names the
/// claim and the file to open.
pub struct Check {
    claim: &'static Claim,
    track: Track,
    /// How many steps were checked so far: a step is known by how many
    /// came before it in the test, the key of the reference's run of it
    /// (`tests/lab/reference_runs.rs`).
    steps: AtomicUsize,
    /// Reports the test's verdict to the grader when the test ends.
    _verdict: crate::verdict::Guard,
}

/// The checks of claim `id` (`"L4.2"`, as in `staff/claims/src/lib.rs`) on SQLite.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Sqlite, id)
}

/// The checks of claim `id` on `track`.
pub fn claim_on(track: Track, id: &str) -> Check {
    quiet_learner_panics();
    let claim =
        claims::claim(id).unwrap_or_else(|| panic!("no claim {id} in staff/claims/src/lib.rs"));
    assert!(
        claim.on(track),
        "claim {id} is not checked on {} (staff/claims/src/lib.rs)",
        track.name()
    );
    Check {
        claim,
        track,
        steps: AtomicUsize::new(0),
        _verdict: crate::verdict::guard(),
    }
}

/// Whether this run of the test binary includes tests under `prefix`
/// (`postgres::`): it names none (all run), or names one there. Read from
/// the arguments, as libtest reads its filters; a flag's value counts as a
/// name, which can only make this say no.
#[cfg(any(feature = "postgres", feature = "etcd"))]
pub fn run_includes(prefix: &str) -> bool {
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    names.is_empty() || names.iter().any(|name| name.starts_with(prefix))
}

/// Fails a test that could not even set up its destination (no server to
/// run on): not a verdict on the learner's code, and never a pass.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
#[track_caller]
pub fn not_checked(what: impl Display, why: impl Display) -> ! {
    panic!(
        "\nNOT CHECKED: {what}\n  got:      {why}\n  note:     this test did not run its checks; it fails so that it is not counted as passed\n"
    )
}

impl Check {
    /// The claim's id (`L7.1`).
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    pub fn id(&self) -> &'static str {
        self.claim.id
    }

    /// The track the claim is checked on.
    pub fn track(&self) -> Track {
        self.track
    }

    /// Fails the test with the claim, the step, what was expected, what
    /// happened, the file to open and the step's hint, for a step whose
    /// facts are its words ([`Facts::read`]).
    #[track_caller]
    pub fn fail(&self, step: impl Display, expected: impl Display, got: impl Display) -> ! {
        let (step, expected, got) = (step.to_string(), expected.to_string(), got.to_string());
        let facts = Facts::read(&step, &expected, &got);
        self.seen();
        self.fail_on(&facts, step, expected, got)
    }

    /// Fails the test with the claim, the step, what was expected, what
    /// happened, the file to open and the step's hint: a question chosen on
    /// what happened (`claims::hints::for_step` on `facts`), with the
    /// command that asks for more. An unfinished stub's failure is one line.
    #[track_caller]
    fn fail_on(&self, facts: &Facts, step: String, expected: String, got: String) -> ! {
        if let Err(drift) = reads_back() {
            panic!(
                "the harness cannot tell this failure: the words of its answers no longer read back as the answers (a bug in the lab, not in your code): {drift}"
            );
        }
        let files = self.claim.files_on(self.track);
        let hint = hints::for_step(self.claim, self.track, facts);
        if hint.id == "not-implemented" {
            // One line (libtest adds the line break) that names the file to
            // open: 85 stubs' failures must fit on a few screens. Where the
            // unfinished function is not the claim's own (an etcd worker's
            // claim met the SQLite stubs first), the claim's file too.
            let stub = stub_phrase(&got);
            let own: Vec<&String> = files
                .iter()
                .filter(|file| !stub.contains(file.as_str()))
                .collect();
            let also = if own.len() == files.len() {
                format!("; then {}", files.join(" and "))
            } else {
                String::new()
            };
            panic!(
                "claim {id} failed on {track}: {stub}{also}",
                id = self.claim.id,
                track = self.track.name(),
            );
        }
        if let Some(run) = facts.run_line() {
            crate::verdict::facts(self.ordinal(), &step, run);
        }
        // A whole schedule of an exploration is told in the step already;
        // its facts are drawn on the report.
        let happened = facts
            .happened()
            .filter(|_| !facts.whole)
            .map(|run| format!("  happened: {run}\n"))
            .unwrap_or_default();
        panic!(
            "\nclaim {id} failed on {track}: {text}\n  step:     {step}\n  expected: {expected}\n  got:      {got}\n{happened}  open:     {files}\n  hint:     {question}\n  more:     {more}   [hint {hint_id}]\n",
            id = self.claim.id,
            track = self.track.name(),
            text = self.claim.text,
            files = self.claim.files_for_step(self.track, &got).join(" and "),
            question = hint.level(1),
            more = self.claim.hint_command(self.track),
            hint_id = hint.id,
        )
    }

    /// Counts one more step as checked.
    fn seen(&self) {
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    /// How many steps were checked before the last one (0 for the first).
    fn ordinal(&self) -> usize {
        self.steps.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// Fails the test because the claim could not be checked here (a tool it
    /// needs is missing): not a verdict on the learner's code, so no file to
    /// open, but never a pass either.
    #[track_caller]
    pub fn not_run(&self, step: impl Display, why: impl Display) -> ! {
        panic!(
            "\nclaim {id} NOT CHECKED on {track}: {text}\n  step:     {step}\n  got:      {why}\n  note:     this test did not run its checks; it fails so that it is not counted as passed\n",
            id = self.claim.id,
            track = self.track.name(),
            text = self.claim.text,
        )
    }

    /// Like [`Check::fail`], for a call that took a route the destination's
    /// checkpoints do not see: the failure says that, not the claim's hint,
    /// which would guess at a mistake the code may not have made.
    #[track_caller]
    pub fn fail_unobserved(
        &self,
        step: impl Display,
        expected: impl Display,
        got: impl Display,
        why: &str,
    ) -> ! {
        panic!(
            "\nclaim {id} NOT CHECKED on {track}: {text}\n  step:     {step}\n  expected: {expected}\n  got:      {got}\n  note:     {why}\n",
            id = self.claim.id,
            track = self.track.name(),
            text = self.claim.text,
        )
    }

    /// Compares what a step produced with what the claim says it must.
    #[track_caller]
    pub fn same(&self, step: impl Display, expected: impl Display, got: impl Display) {
        let (expected, got) = (expected.to_string(), got.to_string());
        if expected != got {
            self.fail(step, expected, got);
        }
    }

    /// `apply` through the learner's code; its outcome must read `expected`.
    #[track_caller]
    pub fn apply(
        &self,
        db: &mut impl Session,
        (resource, generation, request_id, delta): (&str, i64, &str, i64),
        expected: impl Display,
    ) {
        let result = db.apply(resource, generation, request_id, delta);
        let step = format!("apply({resource}, generation {generation}, {request_id:?}, {delta:+})");
        let step = Step::compared(step, expected, describe(&result));
        self.judge(db, step.got(Observed::Answer(answer(&result))));
    }

    /// `install_generation` through the learner's code; must read `expected`.
    #[track_caller]
    pub fn install(
        &self,
        db: &mut impl Session,
        resource: &str,
        generation: i64,
        expected: impl Display,
    ) {
        let result = db.install_generation(resource, generation);
        let step = format!("install_generation({resource}, {generation})");
        let step = Step::compared(step, expected, describe_install(&result));
        self.judge(db, step.got(Observed::Answer(install_answer(&result))));
    }

    /// What a test saw while `db`'s last call was paused: it must read
    /// `expected`. If it does not and the call took a route the checkpoints
    /// do not see, say so, as for the call's own result.
    #[track_caller]
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub fn while_paused(
        &self,
        db: &impl Session,
        step: impl Display,
        expected: impl Display,
        got: impl Display,
    ) {
        self.judge(db, Step::compared(step, expected, got));
    }

    /// A learner's call read `got`; it must read `expected`. If it does not
    /// and the call took a route the checkpoints do not see, say so.
    #[track_caller]
    fn judge(&self, db: &impl Session, step: Step) {
        let events = match (step.failed || scenes::keeps_every_run(), db.traced()) {
            (true, Some((trace, _))) => trace.run(),
            _ => step.events.clone(),
        };
        self.check(Step {
            unobserved: db.unobserved(),
            events,
            ..step
        });
    }

    /// Fails the test at `step` if it failed, on its facts.
    #[track_caller]
    fn check(&self, step: Step) {
        self.seen();
        if !step.failed {
            crate::reference_runs::keep(&step, self.ordinal());
            return;
        }
        match step.unobserved {
            Some(why) => self.fail_unobserved(step.name, step.expected, step.got, why),
            None => self.fail_on(&step.facts(), step.name, step.expected, step.got),
        }
    }

    /// The observer's view of `resource`: generation and value.
    #[track_caller]
    pub fn state(&self, lab: &impl Store, resource: &str, generation: i64, value: i64) {
        let got = lab.state(resource).expect("the observer reads the lab");
        let step = Step::compared(
            format_args!("observe {resource}"),
            format_args!("generation {generation}, value {value}"),
            got,
        );
        self.check(step.got(state_fact(&got)));
    }

    /// Every record of `resource`, each as [`rec`] spells it.
    #[track_caller]
    pub fn records(&self, lab: &impl Store, resource: &str, expected: &[String]) {
        let records = lab
            .records(resource)
            .expect("the observer reads the records");
        let got: Vec<String> = records.iter().map(Record::to_string).collect();
        let step = Step::compared(
            format_args!("records of {resource}"),
            list(expected),
            list(&got),
        );
        self.check(step.got(records_fact(&records)));
    }
}

/// A graded test observes a scene (`fencing_lab::scenes`) with its claim's
/// checks: the first step that differs fails the test, as [`Check::fail`]
/// words it; the story's lines are not the test's business.
impl Observer for Check {
    fn check(&self, _claim: &'static str, step: Step) -> Result<(), Halt> {
        Check::check(self, step);
        Ok(())
    }

    /// A step the harness could not play fails the test as NOT CHECKED.
    fn not_checked(&self, _claim: &'static str, step: &str, why: &str) -> Halt {
        self.not_run(step, why)
    }
}

impl Check {
    /// What a scene run with these checks came to: a step that failed has
    /// failed the test already, so an error here is the harness's own (a
    /// lab it could not create or read).
    #[track_caller]
    pub fn run<T>(&self, scene: Result<T, Halt>) -> T {
        scene.unwrap_or_else(|halt| panic!("the harness stopped the scene: {halt}"))
    }
}

/// `apply is not implemented yet: open exercises/apply.rs`, the first such
/// phrase of a line that may list what several calls were answered.
fn stub_phrase(got: &str) -> &str {
    scenes::stub_phrase(got).unwrap_or(got)
}

/// Hands the harness the functions of this binary's implementation (the
/// learner's, or the reference with `--features solutions`): it never links
/// them itself. First in every test, and in every process a test starts
/// again as a child, before the harness calls them.
pub fn wire() {
    fencing_lab::wire(fencing_lab_exercises::IMPLEMENTATION);
}

/// A panic in the learner's code becomes the call's answer: an unfinished
/// stub's `todo!()` reads "not implemented yet: open <file>", any other
/// panic "apply panicked: <message> (at <file>:<line>:<column>)", which the
/// claim's message shows. The default report of the same panic would only
/// push that message down, so it is left out. A claim's failure prints its
/// message and nothing else: no "thread panicked at" line and no stack
/// trace, whatever `RUST_BACKTRACE` says, since the message already names
/// the claim, the step and the file. Every other panic (the harness's) is
/// reported as usual.
pub fn quiet_learner_panics() {
    wire();
    // First, so that the verdict channel's hook (which records the message)
    // wraps this one, not the default report.
    claim_failures_as_messages();
    crate::verdict::open();
    fencing_lab::quiet_learner_panics();
}

/// Reports a claim's failure (and a NOT CHECKED) as its message alone.
fn claim_failures_as_messages() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            match fencing_lab::panic_message(info.payload()) {
                Some(message) if is_claim_failure(message) => eprint!("{message}"),
                _ => report(info),
            }
        }));
    });
}

/// Whether a panic's message is one [`Check`], [`not_checked`] or the
/// transcripts' comparison wrote.
fn is_claim_failure(message: &str) -> bool {
    let message = message.trim_start_matches('\n');
    message.starts_with("claim L")
        || message.starts_with("NOT CHECKED: ")
        || message.starts_with("the story of ")
        || message.starts_with("exercises/postgres/contract.sql cannot be used")
}

/// What a checkpoint hook saw, read by the test once the paused call returns
/// (a hook must not panic: the panic would surface as the learner's).
#[derive(Clone, Default)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub struct Seen(Rc<RefCell<Vec<String>>>);

#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
impl Seen {
    pub fn push(&self, line: impl Into<String>) {
        self.0.borrow_mut().push(line.into());
    }

    pub fn lines(&self) -> String {
        let lines = self.0.borrow();
        if lines.is_empty() {
            "(never reached: the call returned before it got there)".to_owned()
        } else {
            lines.join("; ")
        }
    }
}

/// Whether the heavier runs are asked for (`FENCING_LAB_THOROUGH=1`, which
/// `.ci/run` sets for one run): every interleaving in both journal modes and
/// with two installs, more threads under load, more property cases. Left
/// unset, the suite stays fast enough for the learner's edit-test loop.
pub fn thorough() -> bool {
    std::env::var_os("FENCING_LAB_THOROUGH").is_some_and(|value| value != "0")
}
