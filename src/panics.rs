//! What becomes of a panic in the learner's code: [`guard`] turns it into a
//! [`LabError`] (an unfinished stub reads "not implemented yet: open this
//! file"; any other panic names its message and where it happened), and
//! [`quiet_learner_panics`] keeps the default report (its "thread panicked
//! at" lines and, with `RUST_BACKTRACE`, a stack trace of the harness)
//! from repeating it.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, Location};

use fencing_lab_api::LabError;

thread_local! {
    /// Whether a [`guard`] is running the learner's code on this thread.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// Where the learner's code last panicked under the guard, as the hook
    /// of [`quiet_learner_panics`] saw it (`exercises/apply.rs:12:5`).
    static CAUGHT_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs the learner's function and turns a panic into an error, so an
/// unfinished stub reads as "not implemented yet: open this file" in tests
/// and in the transcript, and any other panic as its message and the line
/// of the learner's file it came from (where the hook of
/// [`quiet_learner_panics`] is installed to see it). A panic unwinds
/// through the open transaction, whose drop rolls it back.
pub(crate) fn guard<T>(
    function: &'static str,
    file: &'static str,
    body: impl FnOnce() -> Result<T, LabError>,
) -> Result<T, LabError> {
    let outer = GUARDED.with(|guarded| guarded.replace(true));
    CAUGHT_AT.with(|at| at.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(body));
    GUARDED.with(|guarded| guarded.set(outer));
    let at = CAUGHT_AT.with(|at| at.borrow_mut().take());
    match result {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref()).unwrap_or("a panic without a message");
            if message.starts_with("not yet implemented") {
                Err(LabError::NotImplemented { function, file })
            } else {
                let message = match at {
                    Some(at) => format!("{message} (at {at})"),
                    None => message.to_owned(),
                };
                Err(LabError::Panicked { function, message })
            }
        }
    }
}

/// The text a panic carries (`panic!("...")`, `todo!()`), if it carries
/// text.
pub fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// The learner's file a panic happened in, as the learner names it
/// (`exercises/apply.rs`, `solutions/apply.rs`), or `None` for any other
/// file: the harness, its tests, the API, std or a crate. Cargo names a
/// workspace member's files by their path from the workspace's root, and
/// the reference's through `exercises/`'s `path` attributes
/// (`exercises/postgres/../../solutions/postgres/apply.rs`).
fn learner_file(file: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in file.split('/') {
        match part {
            "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    matches!(parts.first(), Some(&("exercises" | "solutions"))).then(|| parts.join("/"))
}

/// `exercises/apply.rs:12:5` for a panic in the learner's files.
fn learner_location(at: &Location<'_>) -> Option<String> {
    learner_file(at.file()).map(|file| format!("{file}:{}:{}", at.line(), at.column()))
}

/// Keeps a panic in the learner's code from printing the default panic
/// report, whatever `RUST_BACKTRACE` says: under [`guard`] (every call of
/// the learner's code) the panic becomes the call's answer, which names
/// its message and its line, so the report would only repeat it, and its
/// stack trace would show the harness, not the learner's code. A panic in
/// the learner's files outside the guard (a thread of their own) is one
/// line: where and what. Every other panic, the harness's, is reported as
/// usual, so one in the harness never ends a program without a word.
/// Installed once per process, however often it is called (`lab` and the
/// tests call it).
pub fn quiet_learner_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let Some(at) = info.location().and_then(learner_location) else {
                return report(info);
            };
            if GUARDED.with(Cell::get) {
                CAUGHT_AT.with(|caught| *caught.borrow_mut() = Some(at));
            } else {
                let message = panic_message(info.payload()).unwrap_or("a panic without a message");
                let thread = std::thread::current();
                let name = thread.name().unwrap_or("a thread");
                eprintln!("{name} panicked at {at}: {message}");
            }
        }));
    });
}
