//! The verdict channel, the grader's half (the test half is
//! `tests/lab/verdict.rs`): a fresh random key and two pipes per test run.
//!
//! The key goes down the first pipe, which the test support reads to its end
//! before any learner code runs; verdicts come back up the second, one line
//! per test, `KEY pass TEST` or `KEY fail TEST MESSAGE`. A line without the
//! key was written by something else in the test process and is ignored (and
//! counted, for the report). Nothing the test process prints to stdout or
//! stderr is read as a verdict, and a test that never sends its line (the
//! process exited early, crashed or hung) has no result, which is not a pass.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use rustix::io::{FdFlags, fcntl_setfd};
use rustix::pipe::{PipeFlags, pipe_with};

use crate::libtest::Verdict;
use crate::process::{self, LineSink};

/// The variable that names the two descriptors to the test support.
const VARIABLE: &str = "FENCING_LAB_VERDICTS";

/// One run's channel, before the run.
pub struct Channel {
    key: String,
    /// The read end of the key's pipe, for the child.
    key_in: OwnedFd,
    /// The write end of the verdicts' pipe, for the child.
    verdicts_out: OwnedFd,
    /// The read end of the verdicts' pipe, ours.
    verdicts_in: OwnedFd,
}

impl Channel {
    /// A fresh key, written into its pipe, and an empty verdicts pipe.
    pub fn open() -> io::Result<Channel> {
        let mut random = [0u8; 16];
        File::open("/dev/urandom")?.read_exact(&mut random)?;
        let key: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        let (key_in, key_out) = pipe_with(PipeFlags::CLOEXEC)?;
        File::from(key_out).write_all(format!("{key}\n").as_bytes())?;
        let (verdicts_in, verdicts_out) = pipe_with(PipeFlags::CLOEXEC)?;
        Ok(Channel {
            key,
            key_in,
            verdicts_out,
            verdicts_in,
        })
    }

    /// Hands the child its two ends (and only the child: they stay closed
    /// on exec for every other program the grader starts).
    pub fn pass_to(&self, command: &mut Command) {
        let (key_in, verdicts_out) = (self.key_in.as_raw_fd(), self.verdicts_out.as_raw_fd());
        command.env(VARIABLE, format!("{key_in}:{verdicts_out}"));
        // SAFETY: between fork and exec only the fcntl system call runs, on
        // two descriptors this `Channel` keeps open until after the spawn.
        unsafe {
            command.pre_exec(move || {
                for fd in [key_in, verdicts_out] {
                    let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                    fcntl_setfd(fd, FdFlags::empty())?;
                }
                Ok(())
            });
        }
    }

    /// Starts reading the verdicts; call before the child starts, as the
    /// pipe holds only so much.
    pub fn listen(self) -> Listening {
        let sink = Arc::new(Mutex::new(Verdicts {
            key: self.key,
            ..Verdicts::default()
        }));
        let (done, finished) = mpsc::channel();
        let reader = {
            let sink = Arc::clone(&sink);
            let pipe = File::from(self.verdicts_in);
            thread::Builder::new().spawn(move || {
                process::read_into(pipe, &sink);
                let _ = done.send(());
            })
        };
        Listening {
            sink,
            finished,
            started: reader.is_ok(),
            child_ends: Some((self.key_in, self.verdicts_out)),
        }
    }
}

/// A channel being read while the run goes on.
pub struct Listening {
    sink: Arc<Mutex<Verdicts>>,
    finished: mpsc::Receiver<()>,
    started: bool,
    child_ends: Option<(OwnedFd, OwnedFd)>,
}

impl Listening {
    /// The verdicts, once the run is over: our copies of the child's ends
    /// are closed, then the pipe is read to its end (or for `grace` more,
    /// should something outside a sandbox still hold it open).
    pub fn finish(mut self, grace: Duration) -> Verdicts {
        self.child_ends = None;
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

    /// Every test that sent a verdict.
    pub fn tests(&self) -> impl Iterator<Item = &str> {
        self.tests.keys().map(String::as_str)
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
        let (verdict, rest) = if let Some(rest) = rest.strip_prefix(" pass ") {
            (Verdict::Passed, rest)
        } else if let Some(rest) = rest.strip_prefix(" fail ") {
            (Verdict::Failed, rest)
        } else {
            self.forged += 1;
            return;
        };
        let (test, message) = rest.split_once(' ').unwrap_or((rest, ""));
        if test.is_empty() || self.tests.len() >= crate::libtest::MAX_TESTS {
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
}
