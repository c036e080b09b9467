//! The verdict channel, the grader's half (the test half is
//! `tests/lab/verdict.rs`): a fresh random key and a Unix socket per test
//! run.
//!
//! The grader writes the key down the socket before the run; the test support
//! reads it before any learner code runs. Verdicts come back up, one line per
//! test, `KEY pass TEST` or `KEY fail TEST MESSAGE`, and `KEY start TEST` when
//! a test begins. A line without the key was written by something else in
//! the test process and is ignored (and counted, for the report). Nothing the
//! test process prints to stdout or stderr is read as a verdict, and a test
//! that never sends its line (the process exited early, crashed or hung) has
//! no result, which is not a pass.
//!
//! A socket, not a pipe: a pipe's write end can be opened again for reading
//! through `/proc/self/fd`, which would let the process read back the keyed
//! lines it sent; a socket cannot be opened that way. Only the descriptor's
//! number is in the environment, never the key.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use rustix::io::{FdFlags, fcntl_dupfd_cloexec, fcntl_setfd};

use crate::engine::libtest::Verdict;
use crate::engine::process::{self, LineSink};

/// The variable that names the child's end of the socket to the test
/// support.
const VARIABLE: &str = "FENCING_LAB_VERDICTS";

/// The lowest descriptor number the child's end may have.
const HIGH_FD: i32 = 900;

/// One run's channel, before the run.
pub struct Channel {
    key: String,
    /// The child's end.
    child: OwnedFd,
    /// Ours.
    ours: UnixStream,
}

impl Channel {
    /// A fresh key, already sent down a new socket.
    pub fn open() -> io::Result<Channel> {
        let mut random = [0u8; 16];
        File::open("/dev/urandom")?.read_exact(&mut random)?;
        let key: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        // Both ends are closed on exec until `pass_to` opens the child's.
        let (mut ours, child) = UnixStream::pair()?;
        ours.write_all(format!("{key}\n").as_bytes())?;
        // A high number: a process the test binary starts inherits the
        // variable but not the descriptor, and its own files, numbered from
        // the lowest free one, never reach this number.
        let child = fcntl_dupfd_cloexec(&child, HIGH_FD)?;
        Ok(Channel { key, child, ours })
    }

    /// Hands the child its end (and only the child: it stays closed on exec
    /// for every other program the grader starts).
    pub fn pass_to(&self, command: &mut Command) {
        let fd = self.child.as_raw_fd();
        command.env(VARIABLE, fd.to_string());
        // SAFETY: between fork and exec only the fcntl system call runs, on
        // a descriptor this `Channel` keeps open until after the spawn.
        unsafe {
            command.pre_exec(move || {
                let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                fcntl_setfd(fd, FdFlags::empty())?;
                Ok(())
            });
        }
    }

    /// Starts reading the verdicts; call before the child starts.
    pub fn listen(self) -> Listening {
        let sink = Arc::new(Mutex::new(Verdicts {
            key: self.key,
            ..Verdicts::default()
        }));
        let (done, finished) = mpsc::channel();
        let reader = {
            let sink = Arc::clone(&sink);
            let socket = self.ours;
            thread::Builder::new().spawn(move || {
                process::read_into(socket, &sink);
                let _ = done.send(());
            })
        };
        Listening {
            sink,
            finished,
            started: reader.is_ok(),
            child_end: Some(self.child),
        }
    }
}

/// A channel being read while the run goes on.
pub struct Listening {
    sink: Arc<Mutex<Verdicts>>,
    finished: mpsc::Receiver<()>,
    started: bool,
    child_end: Option<OwnedFd>,
}

impl Listening {
    /// The tests that began more than `limit` ago and have not reported.
    pub fn overdue(&self, limit: Duration) -> Vec<String> {
        process::lock(&self.sink).overdue(limit)
    }

    /// The verdicts, once the run is over: our copy of the child's end is
    /// closed, then the socket is read to its end (or for `grace` more,
    /// should something outside a sandbox still hold it open).
    pub fn finish(mut self, grace: Duration) -> Verdicts {
        self.child_end = None;
        if self.started {
            let _ = self.finished.recv_timeout(grace);
        }
        std::mem::take(&mut *process::lock(&self.sink))
    }
}

/// The verdicts of one run, as far as they came.
#[derive(Debug, Default)]
pub struct Verdicts {
    key: String,
    tests: BTreeMap<String, (Verdict, String)>,
    /// Lines that did not carry the key.
    pub forged: u64,
    /// Tests that reported more than once.
    pub repeated: BTreeSet<String>,
    /// Tests that said they began, and when the grader heard it.
    started: BTreeMap<String, Instant>,
    /// What happened in a failed test's failing step, as the test sent it
    /// (`lab_claims::facts::wire`).
    facts: BTreeMap<String, String>,
    /// Which step failed a test: how many steps came before it, and its
    /// name.
    steps: BTreeMap<String, (usize, String)>,
}

impl Verdicts {
    /// The verdict of `test`, if it sent one.
    pub fn verdict(&self, test: &str) -> Option<Verdict> {
        self.tests.get(test).map(|(verdict, _)| *verdict)
    }

    /// The message a failed test sent: its panic.
    pub fn message(&self, test: &str) -> Option<&str> {
        self.tests.get(test).map(|(_, message)| message.as_str())
    }

    /// What happened in `test`'s failing step, if it sent that.
    pub fn facts(&self, test: &str) -> Option<&str> {
        self.facts.get(test).map(String::as_str)
    }

    /// Which step failed `test` (how many steps came before it, its name),
    /// if the test said so with its facts.
    pub fn step(&self, test: &str) -> Option<(usize, &str)> {
        self.steps
            .get(test)
            .map(|(occurrence, step)| (*occurrence, step.as_str()))
    }

    /// Every test that sent a verdict.
    pub fn tests(&self) -> impl Iterator<Item = &str> {
        self.tests.keys().map(String::as_str)
    }

    /// The tests that began and have sent no verdict.
    pub fn unfinished(&self) -> Vec<String> {
        self.started
            .keys()
            .filter(|test| !self.tests.contains_key(*test))
            .cloned()
            .collect()
    }

    /// The unfinished tests that began more than `limit` ago.
    fn overdue(&self, limit: Duration) -> Vec<String> {
        self.started
            .iter()
            .filter(|(test, at)| !self.tests.contains_key(*test) && at.elapsed() >= limit)
            .map(|(test, _)| test.clone())
            .collect()
    }

    /// Takes in a later run's verdicts, for tests this one has none of.
    pub fn absorb(&mut self, later: Verdicts) {
        for (test, verdict) in later.tests {
            self.tests.entry(test).or_insert(verdict);
        }
        for (test, line) in later.facts {
            self.facts.entry(test).or_insert(line);
        }
        for (test, step) in later.steps {
            self.steps.entry(test).or_insert(step);
        }
        self.forged += later.forged;
        self.repeated.extend(later.repeated);
    }
}

impl LineSink for Verdicts {
    const MAX_LINE: usize = 8 * 1024;

    fn line(&mut self, line: &str, _cut: bool) {
        // The key is found anywhere on the line: bytes written without a
        // newline by something else run into the next real verdict.
        let found = (!self.key.is_empty())
            .then(|| line.find(&self.key))
            .flatten();
        let Some(at) = found else {
            if !line.trim().is_empty() {
                self.forged += 1;
            }
            return;
        };
        let rest = &line[at + self.key.len()..];
        if let Some(test) = rest.strip_prefix(" start ") {
            if !test.is_empty() && self.started.len() < crate::engine::libtest::MAX_TESTS {
                self.started
                    .entry(test.to_owned())
                    .or_insert_with(Instant::now);
            }
            return;
        }
        if let Some(rest) = rest.strip_prefix(" facts ") {
            let (test, line) = rest.split_once(' ').unwrap_or((rest, ""));
            if !test.is_empty() && self.facts.len() < crate::engine::libtest::MAX_TESTS {
                self.facts.insert(test.to_owned(), line.to_owned());
            }
            return;
        }
        if let Some(rest) = rest.strip_prefix(" step ") {
            let mut parts = rest.splitn(3, ' ');
            let (test, occurrence, step) = (parts.next(), parts.next(), parts.next());
            let occurrence = occurrence.and_then(|n| n.parse::<usize>().ok());
            if let (Some(test), Some(occurrence), Some(step)) = (test, occurrence, step) {
                if !test.is_empty() && self.steps.len() < crate::engine::libtest::MAX_TESTS {
                    self.steps
                        .insert(test.to_owned(), (occurrence, step.to_owned()));
                }
            }
            return;
        }
        let (verdict, rest) = if let Some(rest) = rest.strip_prefix(" pass ") {
            (Verdict::Passed, rest)
        } else if let Some(rest) = rest.strip_prefix(" fail ") {
            (Verdict::Failed, rest)
        } else {
            self.forged += 1;
            return;
        };
        let (test, message) = rest.split_once(' ').unwrap_or((rest, ""));
        if test.is_empty() || self.tests.len() >= crate::engine::libtest::MAX_TESTS {
            return;
        }
        let message = unescape(message);
        match self.tests.get_mut(test) {
            Some(known) => {
                self.repeated.insert(test.to_owned());
                // The support sends one line per test; of two, the failure
                // stands.
                if verdict == Verdict::Failed {
                    *known = (verdict, message);
                }
            }
            None => {
                self.tests.insert(test.to_owned(), (verdict, message));
            }
        }
    }
}

/// `\n` and `\\` back to a newline and a backslash.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> Verdicts {
        Verdicts {
            key: "k3y".to_owned(),
            ..Verdicts::default()
        }
    }

    #[test]
    fn a_line_without_the_key_is_counted_and_ignored() {
        let mut verdicts = sink();
        verdicts.line("test sqlite::l1_1 ... ok", false);
        verdicts.line("guess pass sqlite::l1_1", false);
        assert_eq!(verdicts.verdict("sqlite::l1_1"), None);
        assert_eq!(verdicts.forged, 2);
    }

    #[test]
    fn a_keyed_line_is_read_even_after_garbage() {
        let mut verdicts = sink();
        verdicts.line("xxxxk3y pass a::b", false);
        verdicts.line("k3y fail a::c claim L1.1 failed\\n  step: one", false);
        assert_eq!(verdicts.verdict("a::b"), Some(Verdict::Passed));
        assert_eq!(verdicts.verdict("a::c"), Some(Verdict::Failed));
        assert_eq!(
            verdicts.message("a::c"),
            Some("claim L1.1 failed\n  step: one")
        );
    }

    #[test]
    fn of_two_verdicts_the_failure_stands() {
        let mut verdicts = sink();
        verdicts.line("k3y fail a::b no", false);
        verdicts.line("k3y pass a::b", false);
        assert_eq!(verdicts.verdict("a::b"), Some(Verdict::Failed));
        assert!(verdicts.repeated.contains("a::b"));
    }

    #[test]
    fn a_failure_names_its_step_for_the_reference_run() {
        let mut verdicts = sink();
        verdicts.line("k3y facts a::b N,1,worker A;C,1,install,fund-A,2", false);
        verdicts.line(
            "k3y step a::b 1 apply(fund-A, generation 1, \"r1\", +5)",
            false,
        );
        verdicts.line("k3y step a::c x apply", false);
        assert_eq!(
            verdicts.step("a::b"),
            Some((1, "apply(fund-A, generation 1, \"r1\", +5)"))
        );
        assert_eq!(verdicts.step("a::c"), None);
        assert_eq!(verdicts.forged, 0);
    }
}
