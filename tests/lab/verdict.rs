//! The test half of the grader's verdict channel. Under `cargo test` it does
//! nothing; under the grader, each graded test reports its own verdict here,
//! and the grader reads no verdict from what the test process prints.
//!
//! The grader starts the test binary with `FENCING_LAB_VERDICTS=KEY_FD:OUT_FD`:
//! two pipes it opened for this run. The first carries a fresh random key and
//! is read to its end on the first call of [`open`], which every graded test
//! makes before it calls the learner's code; the second is write-only, so
//! nothing in the process can read back what was sent. A verdict is one line,
//! `KEY pass TEST` or `KEY fail TEST MESSAGE`, written in one `write` of less
//! than a pipe's atomic size, so lines from several threads never mix.
//!
//! The verdict of a test is its [`Guard`]'s: the guard lives in the test's
//! `Check` (`let c = claim("L1.1")`, the first line of every graded test), so
//! it is dropped when the test's body ends, and it reports `pass` when the
//! body returned and `fail`, with the panic's message, when it unwound. A test
//! that never gets there (the process exited, crashed or hung) reports
//! nothing, and the grader counts it as no result. Printing a lookalike line
//! to stdout changes nothing; writing one to the pipe without the key is
//! noticed and ignored.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{Read, Write};
use std::panic;
use std::sync::{Mutex, OnceLock};
use std::thread;

/// The variable the grader sets; absent under `cargo test`.
const VARIABLE: &str = "FENCING_LAB_VERDICTS";

/// A verdict line stays below the 4096 bytes a pipe writes atomically.
const MAX_LINE: usize = 3800;

struct Channel {
    key: String,
    out: Mutex<File>,
}

static CHANNEL: OnceLock<Option<Channel>> = OnceLock::new();

thread_local! {
    /// Whether a guard already speaks for this thread's test.
    static OWNED: Cell<bool> = const { Cell::new(false) };
    /// The last panic's message on this thread: a failed test's reason.
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Reads the key and opens the channel, once per process; does nothing when
/// the grader did not start this process. Called before any learner code.
pub fn open() {
    CHANNEL.get_or_init(|| {
        let value = std::env::var(VARIABLE).ok()?;
        let (key_fd, out_fd) = value.split_once(':')?;
        let mut key = String::new();
        File::open(format!("/proc/self/fd/{key_fd}"))
            .and_then(|mut pipe| pipe.read_to_string(&mut key))
            .ok()?;
        let out = File::options()
            .write(true)
            .open(format!("/proc/self/fd/{out_fd}"))
            .ok()?;
        let key = key.trim().to_owned();
        if key.is_empty() {
            return None;
        }
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
    let test = thread::current().name().map(str::to_owned);
    Guard {
        test: test.filter(|_| listening && first),
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Some(test) = self.test.take() else {
            return;
        };
        OWNED.with(|owned| owned.set(false));
        let Some(Some(channel)) = CHANNEL.get() else {
            return;
        };
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
        line.push('\n');
        let mut out = channel
            .out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Nothing to do if the pipe is gone: the grader counts no result.
        let _ = out.write_all(line.as_bytes());
    }
}
