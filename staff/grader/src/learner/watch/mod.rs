//! `cargo grade --watch`: the learner's loop in one terminal. The scorecard
//! is graded again each time a file under `exercises/` (or `solutions/`,
//! with `--solutions`) is saved, and drawn as one screen: a bar per lesson,
//! the next failing claim with its step and its level-1 hint, and the keys.
//!
//! Keys: `h` shows the next level of that hint (a question, a pointer, then
//! the answer), `r` grades again, `q` (or Ctrl-C, Ctrl-D) quits. `s` shows
//! how the reference does a lesson at full marks, beside the learner's code,
//! and `x` resets an exercise file to its stub (both in `extras`). On a
//! terminal the keys act at once; elsewhere (a pipe) a key is a line.
//!
//! It is the grader's own loop, with the grader's own sandbox, and lives in
//! the grader's package: the learner's `cargo test` builds none of it.
//!
//! The parts, as rustlings splits its watch mode: `extras`, the views of
//! a lesson at full marks and the reset; `state`, what a run came
//! to and how far into its hint the learner is; `files`, the file
//! watcher's events; `keys`, the terminal's keys; `screen`, the drawing.

mod extras;
mod files;
mod keys;
mod screen;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::engine::score::Graded;
use crate::learner::scorecard;
use extras::{Action, Extras};
use files::{settle, shown};
use keys::Keys;
use screen::clear;
use state::State;

/// What wakes the loop.
enum Event {
    /// A source file changed (its path, for the status line).
    Saved(PathBuf),
    /// A key.
    Key(u8),
    /// Standard input ended.
    Closed,
}

/// What the learner did while a run's screen was up.
enum Next {
    /// Saved a source file: grade again.
    Saved(PathBuf),
    /// Asked with `r`: grade again.
    Asked,
    /// Quit.
    Quit,
}

/// Watches the exercises and shows the scorecard until the learner quits.
/// Exits 0 if the last run passed every claim.
pub fn run(options: &scorecard::Options) -> Result<ExitCode, String> {
    let checkout = crate::engine::checkout::repository();
    let folder = if options.solutions {
        "solutions"
    } else {
        "exercises"
    };
    let (tx, events) = mpsc::channel();
    let _watcher = files::watch(&checkout.join(folder), tx.clone())?;
    let key_reader = Keys::start(tx);
    let mut passed = false;
    let mut reason = String::from("started");
    // The lessons at full marks in the last run, and what its reset did.
    let (mut before, mut notice) = (None, None);
    loop {
        let (graded, took, report) = grade(options, &reason);
        // Saves made while the run was building belong to the next run.
        let Ok(pending) = saved_meanwhile(&events) else {
            break;
        };
        let mut state = State::new(graded, folder, took, report.as_deref());
        state.extras = Extras::new(&checkout, state.score.as_ref(), before.as_deref());
        state.extras.notice = notice.take();
        before = Some(state.extras.full());
        passed = state.passed();
        state.draw();
        reason = match pending {
            Some(path) => {
                settle(&events);
                format!(
                    "{} saved while the last run was going",
                    shown(&checkout, &path)
                )
            }
            None => match wait(&events, &mut state) {
                Next::Saved(path) => {
                    notice = state.extras.notice.take();
                    settle(&events);
                    format!("{} saved", shown(&checkout, &path))
                }
                Next::Asked => "asked with r".to_owned(),
                Next::Quit => break,
            },
        };
    }
    // The terminal gets its settings back before the last line.
    drop(key_reader);
    println!();
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Grades once, after saying why on a cleared screen: the score, how long
/// it took, and the path of its report as `cargo grade` writes it (each
/// failing step's run drawn) when a claim failed. A report that cannot be
/// written changes nothing else.
fn grade(
    options: &scorecard::Options,
    reason: &str,
) -> (Result<Graded, String>, Duration, Option<PathBuf>) {
    clear();
    println!("grading ({reason})…");
    let started = Instant::now();
    let graded = scorecard::score(options, false);
    let took = started.elapsed();
    let report = match &graded {
        Ok(graded) if options.scope.part.is_none() && !graded.score.full_marks() => {
            scorecard::write_report(options, graded, took).ok()
        }
        _ => None,
    };
    (graded, took, report)
}

/// The learner quit.
struct Quit;

/// The last source file saved while the run was going, if one was (it
/// belongs to the next run); `Quit` if the learner quit meanwhile.
fn saved_meanwhile(events: &Receiver<Event>) -> Result<Option<PathBuf>, Quit> {
    let mut pending = None;
    while let Ok(event) = events.try_recv() {
        match event {
            Event::Saved(path) => pending = Some(path),
            Event::Key(b'q' | 3 | 4) | Event::Closed => return Err(Quit),
            Event::Key(_) => {}
        }
    }
    Ok(pending)
}

/// Waits on a run's screen for what the learner does: a key the screen
/// answers itself (a view of a lesson at full marks, the next hint) draws
/// it again; a save, `r` or `q` ends the wait.
fn wait(events: &Receiver<Event>, state: &mut State) -> Next {
    loop {
        match events.recv() {
            Ok(Event::Saved(path)) => return Next::Saved(path),
            Ok(Event::Key(key)) if state.extras.key(key) == Action::Draw => state.draw(),
            Ok(Event::Key(b'h' | b'H')) if state.extras.shows_next() => {
                state.next_hint();
                state.draw();
            }
            Ok(Event::Key(b'r' | b'R')) => return Next::Asked,
            Ok(Event::Key(b'q' | b'Q' | 3 | 4)) | Ok(Event::Closed) | Err(_) => return Next::Quit,
            Ok(Event::Key(_)) => {}
        }
    }
}
