//! L5.6: a real process crash. The other L5 tests inject faults inside a
//! live process, and L5.5 only closes and reopens the file. Here a child
//! process runs `apply` on the lab file and dies by `std::process::abort()`:
//! no unwinding, no destructors, no ROLLBACK statement. The parent then opens
//! the file again, and SQLite's own recovery decides what survived.
//!
//! The child is this very test, run again by the test binary: the parent
//! starts `current_exe() --exact <its own name>` with the database path in
//! `FENCING_LAB_CRASH_CHILD`, and the copy that finds the variable set plays
//! the child. So no extra test is listed, none is ignored, and against the
//! stubs the test fails like every other.
//!
//! What this shows and what it does not: the process dies, the operating
//! system keeps its page cache, and the harness's SQLite runs with
//! `synchronous = OFF` (commits go to the operating system without waiting
//! for the disk, which a process crash cannot undo). This tests SQLite's recovery after a
//! *process* crash (a leftover rollback journal or WAL on the next open). It
//! does not test power loss, a kernel crash, or a disk that lies about
//! `fsync`.
//!
//! Each case runs `FENCING_LAB_CRASH_TRIALS` trials (default 2) per journal
//! mode, each with its own file and its own child. CI runs 50.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Output, Stdio};

use fencing_lab::{Journal, Lab, Session, checkpoint, describe, describe_error};

use crate::support::*;

/// Set in the child only: the database file it must open.
const CHILD_DB: &str = "FENCING_LAB_CRASH_CHILD";
/// How many trials per case and journal mode; CI sets 50.
const TRIALS: &str = "FENCING_LAB_CRASH_TRIALS";
const DEFAULT_TRIALS: u32 = 2;
/// The child's exit code when `apply` returned where it should have died.
const RETURNED: i32 = 3;
/// Prefix of the child's progress lines, which the parent reads back.
const SAYS: &str = "crash child: ";
/// `SIGABRT`: 6 on Linux and macOS.
#[cfg(unix)]
const SIGABRT: i32 = 6;

/// Where the child dies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kill {
    /// In the checkpoint hook before the second of the two writes: one is
    /// written, the transaction is open.
    BetweenWrites,
    /// Right after `apply` returned: the transaction is committed.
    AfterApply,
}

/// A worker process dies between updating the value and recording the
/// request. Reopened, the file holds the earlier value and no record;
/// retrying the same request applies it exactly once.
#[test]
fn l5_6_killed_between_value_and_record_leaves_neither() {
    let c = claim("L5.6");
    if let Some(db) = std::env::var_os(CHILD_DB) {
        child(Kill::BetweenWrites, Path::new(&db));
    }
    run_trials(&c, Kill::BetweenWrites, |trial| {
        let lab = &trial.lab;
        // The worker applied r0 earlier; the child will try r1.
        first_apply(lab)?;
        let story = trial.run_child()?;
        expect(
            "a child process runs apply(fund-A, generation 1, \"r1\", +5) and aborts before the record",
            "aborting between the two writes; killed by SIGABRT",
            story,
        )?;
        // The value the child wrote died with it, and so did the record.
        expect_state(lab, 1, 2)?;
        expect_records(lab, &[rec(A, "r0", 2, 2, 1)])?;
        // The retry applies once; the retry of the retry is a replay.
        expect_apply(lab, ("r1", 5), applied(7))?;
        expect_apply(lab, ("r1", 5), replayed(7))?;
        expect_state(lab, 1, 7)?;
        expect_records(lab, &[rec(A, "r0", 2, 2, 1), rec(A, "r1", 5, 7, 1)])
    });
}

/// A worker process dies right after `apply` committed and returned. The
/// effect and its record both survive; a retry is a replay of the stored
/// result, not a second effect.
#[test]
fn l5_6_killed_after_commit_keeps_value_and_record() {
    let c = claim("L5.6");
    if let Some(db) = std::env::var_os(CHILD_DB) {
        child(Kill::AfterApply, Path::new(&db));
    }
    run_trials(&c, Kill::AfterApply, |trial| {
        let lab = &trial.lab;
        first_apply(lab)?;
        let story = trial.run_child()?;
        expect(
            "a child process runs apply(fund-A, generation 1, \"r1\", +5), then aborts",
            format!(
                "apply returned {}; aborting after apply; killed by SIGABRT",
                applied(7)
            ),
            story,
        )?;
        expect_state(lab, 1, 7)?;
        expect_records(lab, &[rec(A, "r0", 2, 2, 1), rec(A, "r1", 5, 7, 1)])?;
        expect_apply(lab, ("r1", 5), replayed(7))?;
        expect_state(lab, 1, 7)
    });
}

/// One step whose outcome differed from the claim, kept so that every trial
/// runs and the failures can be counted before the test fails.
struct Mismatch {
    step: String,
    expected: String,
    got: String,
}

fn expect(step: impl Display, expected: impl Display, got: impl Display) -> Result<(), Mismatch> {
    let (expected, got) = (expected.to_string(), got.to_string());
    if expected == got {
        Ok(())
    } else {
        Err(Mismatch {
            step: step.to_string(),
            expected,
            got,
        })
    }
}

/// The harness itself failed (not the learner's code): no temp dir, no
/// child process.
fn harness(step: &str, error: impl Display) -> Mismatch {
    Mismatch {
        step: step.to_owned(),
        expected: "the harness step succeeds".to_owned(),
        got: error.to_string(),
    }
}

/// One trial: a fresh lab, this test's name (the child runs it with
/// `--exact`), and what the child left next to the file when it died.
struct Trial {
    lab: Lab,
    name: String,
    left: Cell<Option<&'static str>>,
}

/// Runs `trial` on a fresh lab in each journal mode, `trials` times each,
/// counts the failures, and fails the claim with the first mismatch and the
/// counts if any trial failed; a passing run prints the counts (shown with
/// `--nocapture`).
fn run_trials(c: &Check, kill: Kill, trial: impl Fn(&Trial) -> Result<(), Mismatch>) {
    let trials = trials_from_env();
    let name = own_name();
    let mut first_failure = None;
    let mut summaries = Vec::new();
    for journal in [Journal::Rollback, Journal::Wal] {
        let mut failures = 0;
        let mut left: BTreeMap<&str, u32> = BTreeMap::new();
        for n in 1..=trials {
            let outcome = match Lab::new(journal) {
                Ok(lab) => {
                    let this = Trial {
                        lab,
                        name: name.clone(),
                        left: Cell::new(None),
                    };
                    let outcome = trial(&this);
                    if let Some(what) = this.left.get() {
                        *left.entry(what).or_default() += 1;
                    }
                    outcome
                }
                Err(error) => Err(harness("create a lab", describe_error(&error))),
            };
            if let Err(mismatch) = outcome {
                failures += 1;
                first_failure.get_or_insert((journal, n, mismatch));
            }
        }
        let mut summary = format!(
            "L5.6 {}, {journal}: {trials} trials, {failures} failed",
            match kill {
                Kill::BetweenWrites => "killed before the record",
                Kill::AfterApply => "killed after commit",
            }
        );
        if !left.is_empty() {
            let left: Vec<String> = left
                .iter()
                .map(|(what, count)| format!("{what} ({count} of {trials})"))
                .collect();
            summary += &format!("; left behind: {}", left.join(", "));
        }
        summaries.push(summary);
    }
    if let Some((journal, n, mismatch)) = first_failure {
        c.fail(
            format_args!("{} (first failure: trial {n}, {journal})", mismatch.step),
            mismatch.expected,
            format_args!(
                "{}\n  trials:   {}",
                mismatch.got,
                summaries.join("\n            ")
            ),
        );
    }
    // Only a passing run gets here; CI shows these lines with --nocapture.
    for summary in summaries {
        println!("{summary}");
    }
}

fn trials_from_env() -> u32 {
    match std::env::var(TRIALS) {
        Err(_) => DEFAULT_TRIALS,
        Ok(text) => match text.parse() {
            Ok(n) if n >= 1 => n,
            _ => panic!("{TRIALS}={text:?}: expected a whole number of trials, at least 1"),
        },
    }
}

/// This test's full name, which libtest gives the thread running it; the
/// child is started with `--exact` on it.
fn own_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or_default();
    let function = name.rsplit("::").next().unwrap_or_default();
    assert!(
        function.starts_with("l5_6_"),
        "the crash test starts its child by its own test name, but its thread is named \
         {name:?}: run it through the test binary's own harness"
    );
    name.to_owned()
}

/// Before the crash, in the parent: r0 (+2) makes 2. The connection is
/// closed again, so the parent holds nothing open while the child runs and
/// its next open is the one that finds whatever the child left behind.
fn first_apply(lab: &Lab) -> Result<(), Mismatch> {
    expect_apply(lab, ("r0", 2), applied(2))
}

/// `apply(fund-A, generation 1, request_id, delta)` on a new connection.
fn expect_apply(
    lab: &Lab,
    (request_id, delta): (&str, i64),
    expected: String,
) -> Result<(), Mismatch> {
    let step = format!("apply({A}, generation 1, {request_id:?}, {delta:+})");
    let mut worker = lab
        .connect()
        .map_err(|e| harness("connect", describe_error(&e)))?;
    let got = worker.apply(A, 1, request_id, delta);
    expect(step, expected, describe(&got))
}

fn expect_state(lab: &Lab, generation: i64, value: i64) -> Result<(), Mismatch> {
    let got = lab
        .state(A)
        .map(|state| state.to_string())
        .unwrap_or_else(|e| describe_error(&e));
    expect(
        format_args!("observe {A}"),
        format_args!("generation {generation}, value {value}"),
        got,
    )
}

fn expect_records(lab: &Lab, expected: &[String]) -> Result<(), Mismatch> {
    let got = match lab.records(A) {
        Ok(records) if records.is_empty() => "no records".to_owned(),
        Ok(records) => records
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => describe_error(&e),
    };
    let expected = if expected.is_empty() {
        "no records".to_owned()
    } else {
        expected.join("; ")
    };
    expect(format_args!("records of {A}"), expected, got)
}

impl Trial {
    /// Starts the child on this trial's file and waits for it. Returns what
    /// happened as one line: the child's progress lines, then how it ended.
    fn run_child(&self) -> Result<String, Mismatch> {
        let exe = std::env::current_exe().map_err(|e| harness("find the test binary", e))?;
        let db = self.lab.path();
        // The child works in the lab's temp dir, so that even a core file
        // (where the system writes one despite the child's limit) goes away
        // with it.
        let output = Command::new(exe)
            .args(["--exact", &self.name, "--nocapture", "--test-threads", "1"])
            .env(CHILD_DB, db)
            .env("RUST_BACKTRACE", "0")
            .current_dir(db.parent().unwrap_or(db))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| harness("start the child process", e))?;
        self.left.set(Some(left_behind(db)));
        Ok(story(&output))
    }
}

/// What the dead child left next to the database, looked at before anyone
/// opens it again: the next open is SQLite's recovery from exactly this.
fn left_behind(db: &Path) -> &'static str {
    let non_empty = |suffix: &str| {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        std::fs::metadata(path).is_ok_and(|meta| meta.len() > 0)
    };
    match (non_empty("-journal"), non_empty("-wal")) {
        (true, _) => "a hot rollback journal, rolled back by the next open",
        (false, true) => "a WAL with committed frames, recovered by the next open",
        (false, false) => "nothing to recover",
    }
}

/// "aborting between the two writes; killed by SIGABRT" and the like; the
/// child's stderr is added when it ended any other way.
fn story(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    // libtest's own "test <name> ... " may share the first line.
    let mut lines: Vec<String> = stdout
        .lines()
        .filter_map(|line| line.split_once(SAYS))
        .map(|(_, said)| said.to_owned())
        .collect();
    if lines.is_empty() {
        lines.push("the child said nothing (did it run this test?)".to_owned());
    }
    let ended = ended(output.status);
    let aborted = ended == "killed by SIGABRT";
    lines.push(ended);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    if !aborted && !stderr.is_empty() {
        lines.push(format!("its stderr: {stderr}"));
    }
    lines.join("; ")
}

#[cfg(unix)]
fn ended(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (_, Some(SIGABRT)) => "killed by SIGABRT".to_owned(),
        (_, Some(signal)) => format!("killed by signal {signal}"),
        (Some(code), None) => format!("exited with code {code}"),
        (None, None) => status.to_string(),
    }
}

#[cfg(not(unix))]
fn ended(status: ExitStatus) -> String {
    // No signals: an abort is any failure that is not the child's own exit.
    match status.code() {
        Some(0 | RETURNED | 101) => format!("exited with code {}", status.code().unwrap_or(0)),
        _ => "killed by SIGABRT".to_owned(),
    }
}

/// The child's side: open the parent's file, run `apply`, die by `abort()`
/// where `kill` says. Never returns.
fn child(kill: Kill, db: &Path) -> ! {
    crate::support::wire();
    no_core_dumps();
    let lab = Lab::open_existing(db).unwrap_or_else(|e| {
        say(format_args!(
            "cannot open {}: {}",
            db.display(),
            describe_error(&e)
        ));
        std::process::exit(RETURNED)
    });
    let mut worker = lab.connect().unwrap_or_else(|e| {
        say(format_args!("cannot connect: {}", describe_error(&e)));
        std::process::exit(RETURNED)
    });
    if kill == Kill::BetweenWrites {
        // Dies at the second of the two writes, whichever order they come
        // in, so the first write is made and the second is not.
        worker.on_checkpoint(checkpoint::on_writes(
            || {},
            || {
                say("aborting between the two writes");
                // No unwinding and no destructors: the open transaction
                // is neither committed nor rolled back by this process.
                std::process::abort()
            },
        ));
    }
    let result = worker.apply(A, 1, "r1", 5);
    say(format_args!("apply returned {}", describe(&result)));
    if kill == Kill::AfterApply {
        say("aborting after apply");
        std::process::abort();
    }
    std::process::exit(RETURNED)
}

/// One progress line for the parent, flushed now: `abort()` flushes nothing.
fn say(line: impl Display) {
    let mut stdout = std::io::stdout().lock();
    // If the parent cannot read it, the parent reports the missing line.
    let _ = writeln!(stdout, "{SAYS}{line}");
    let _ = stdout.flush();
}

/// A deliberate abort is not a bug to keep a core file of.
fn no_core_dumps() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Core);
        // Best effort: where it fails, the child's cwd is the lab's temp dir.
        let _ = setrlimit(
            Resource::Core,
            Rlimit {
                current: Some(0),
                maximum: limit.maximum,
            },
        );
    }
}
