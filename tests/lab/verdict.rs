//! The test half of the grader's verdict channel. Under `cargo test` it does
//! nothing; under the grader, each graded test reports its own verdict here,
//! and the grader reads no verdict from what the test process prints.
//!
//! The grader starts the test binary with `FENCING_LAB_VERDICTS=FD`: one end
//! of a Unix socket it opened for this run (a socket, unlike a pipe, cannot
//! be opened again through `/proc/self/fd`, so nothing in the process can get
//! a reading end of what it sends). The grader's first line down it is a fresh
//! random key, read on the first call of [`open`], which every graded test
//! makes before it calls the learner's code; the key is never in the
//! environment, and the descriptor is then moved to one closed on exec, so
//! no program a test starts inherits it. A verdict is one line, `KEY pass
//! TEST` or `KEY fail TEST MESSAGE`, written in one `write` under a lock, so
//! lines from several threads never mix; `KEY facts TEST LINE`, before a
//! failure, carries what happened in the failing step (its calls,
//! checkpoints, commits and answers, `lab_claims::facts::wire`), which the
//! grader draws, and `KEY step TEST N STEP` which step that was (`N` steps
//! came before it; `STEP` is its name), by which the grader finds the
//! reference's run of it; `KEY start TEST` says a test began,
//! so the grader can name a test that hangs and cut it off alone.
//!
//! Code in the same process can still read the key from the process's
//! memory; what keeps a submission from doing so is the grader's review of
//! its source (`staff/grader/allowlist.txt`), not this channel.
//!
//! The verdict of a test is its [`Guard`]'s: the guard lives in the test's
//! `Check` (`let c = claim("L1.1")`, bound before any code under test runs), so
//! it is dropped when the test's body ends, and it reports `pass` when the
//! body returned and `fail`, with the panic's message, when it unwound. A test
//! that never gets there (the process exited, crashed or hung) reports
//! nothing, and the grader counts it as no result. Printing a lookalike line
//! to stdout changes nothing; writing one to the pipe without the key is
//! noticed and ignored.

use std::cell::{Cell, RefCell};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::panic;
use std::sync::{Mutex, OnceLock};
use std::thread;

/// The variable the grader sets; absent under `cargo test`.
const VARIABLE: &str = "FENCING_LAB_VERDICTS";

/// The longest verdict line; a failure's message is cut to fit.
const MAX_LINE: usize = 3800;

struct Channel {
    key: String,
    out: Mutex<UnixStream>,
}

static CHANNEL: OnceLock<Option<Channel>> = OnceLock::new();

thread_local! {
    /// Whether a guard already speaks for this thread's test.
    static OWNED: Cell<bool> = const { Cell::new(false) };
    /// The last panic's message on this thread: a failed test's reason.
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    /// The step that failed this thread's test (how many steps came before
    /// it, its name) and what happened in it, as
    /// `lab_claims::facts::wire` writes it: sent before the failure.
    static FACTS: RefCell<Option<(usize, String, String)>> = const { RefCell::new(None) };
}

/// What happened in the step that is about to fail this thread's test, its
/// `ordinal`th step, named `step`: the grader draws it, beside the
/// reference's run of the same step.
pub fn facts(ordinal: usize, step: &str, line: String) {
    FACTS.with(|facts| *facts.borrow_mut() = Some((ordinal, step.to_owned(), line)));
}

/// Reads the key and opens the channel, once per process; does nothing when
/// the grader did not start this process. Called before any learner code.
pub fn open() {
    CHANNEL.get_or_init(|| {
        let fd: i32 = std::env::var(VARIABLE).ok()?.parse().ok()?;
        // Only a socket is taken: in a process this one started, the
        // variable is inherited but the descriptor is not, and the number
        // may be some other file's.
        let kind = std::fs::metadata(format!("/proc/self/fd/{fd}")).ok()?;
        if !kind.file_type().is_socket() {
            return None;
        }
        // SAFETY: the grader handed this descriptor to the process for the
        // channel alone; nothing else in it owns or closes it, and this
        // runs once (`OnceLock`).
        let handed = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
        // A copy closed on exec; the inherited one is closed when `handed`
        // goes.
        let stream = handed.try_clone().ok()?;
        drop(handed);
        let mut key = String::new();
        BufReader::new(&stream).read_line(&mut key).ok()?;
        let out = stream;
        let key = key.trim().to_owned();
        if key.is_empty() {
            return None;
        }
        #[cfg(feature = "postgres")]
        crate::postgres::start_server_early();
        #[cfg(feature = "etcd")]
        crate::l7_etcd::start_cluster_early();
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let message =
                fencing_lab::panic_message(info.payload()).unwrap_or("a panic without a message");
            LAST_PANIC.with(|last| *last.borrow_mut() = message.to_owned());
            default(info);
        }));
        Some(Channel {
            key,
            out: Mutex::new(out),
        })
    });
}

/// Speaks for the test running on this thread, when it is dropped.
pub struct Guard {
    test: Option<String>,
}

/// The guard of the current test: the first one made on its thread reports;
/// any later one (a second claim in the same test) is silent.
pub fn guard() -> Guard {
    open();
    let listening = CHANNEL.get().is_some_and(Option::is_some);
    let first = OWNED.with(|owned| !owned.replace(true));
    let test = thread::current()
        .name()
        .map(str::to_owned)
        .filter(|_| listening && first);
    if let (Some(test), Some(Some(channel))) = (&test, CHANNEL.get()) {
        send(channel, format!("{} start {test}", channel.key));
    }
    Guard { test }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let drawn = FACTS.with(|facts| facts.borrow_mut().take());
        let Some(test) = self.test.take() else {
            return;
        };
        OWNED.with(|owned| owned.set(false));
        let Some(Some(channel)) = CHANNEL.get() else {
            return;
        };
        if let (true, Some((ordinal, step, drawn))) = (thread::panicking(), drawn) {
            let line = format!("{} facts {test} {drawn}", channel.key);
            // Too long to go whole: not drawn.
            if line.len() <= MAX_LINE {
                send(channel, line);
                let step = step.replace(['\n', '\r'], " ");
                let line = format!("{} step {test} {ordinal} {step}", channel.key);
                if line.len() <= MAX_LINE {
                    send(channel, line);
                }
            }
        }
        let mut line = if thread::panicking() {
            let message = LAST_PANIC.with(|last| last.take());
            let escaped = message.replace('\\', "\\\\").replace('\n', "\\n");
            format!("{} fail {test} {escaped}", channel.key)
        } else {
            format!("{} pass {test}", channel.key)
        };
        if line.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
        }
        send(channel, line);
    }
}

/// Sends one line, whole, under the channel's lock.
fn send(channel: &Channel, mut line: String) {
    line.push('\n');
    let mut out = channel
        .out
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Nothing to do if the socket is gone: the grader counts no result.
    let _ = out.write_all(line.as_bytes());
}
