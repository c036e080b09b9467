//! `cargo grade --watch`: the learner's loop in one terminal. The scorecard
//! is graded again each time a file under `exercises/` (or `solutions/`,
//! with `--solutions`) is saved, and drawn as one screen: a bar per lesson,
//! the next failing claim with its step and its level-1 hint, and the keys.
//!
//! Keys: `h` shows the next level of that hint (a question, a pointer, then
//! the answer), `r` grades again, `q` (or Ctrl-C, Ctrl-D) quits. `s` shows
//! how the reference does a lesson at full marks, beside the learner's code,
//! and `x` resets an exercise file to its stub (both in `full_marks`). On a
//! terminal the keys act at once; elsewhere (a pipe) a key is a line.
//!
//! It is the grader's own loop, with the grader's own sandbox, and lives in
//! the grader's package: the learner's `cargo test` builds none of it.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::claims::{LESSONS, Track, hints};
use crate::full_marks::{Action, Extras};
use crate::score::Graded;
use crate::score::{ClaimScore, Status, TrackScore};
use crate::scorecard;

/// How long the files must stay still after a save before the next run: an
/// editor's save is often several writes (a temporary file, a rename).
const SETTLE: Duration = Duration::from_millis(200);

/// The width of a lesson's bar, in characters.
const BAR: usize = 20;

/// What wakes the loop.
enum Event {
    /// A source file changed (its path, for the status line).
    Saved(PathBuf),
    /// A key.
    Key(u8),
    /// Standard input ended.
    Closed,
}

/// Watches the exercises and shows the scorecard until the learner quits.
/// Exits 0 if the last run passed every claim.
pub fn run(options: &scorecard::Options) -> Result<ExitCode, String> {
    let checkout = crate::checkout::repository();
    let folder = if options.solutions {
        "solutions"
    } else {
        "exercises"
    };
    let watched = checkout.join(folder);
    let (tx, events) = mpsc::channel();

    let saved = tx.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if !matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
        ) {
            return;
        }
        // Editors write swap and backup files beside the source; only Rust
        // sources count.
        if let Some(path) = event.paths.into_iter().find(|path| is_source(path)) {
            let _ = saved.send(Event::Saved(path));
        }
    })
    .map_err(|error| format!("cannot watch {}: {error}", watched.display()))?;
    watcher
        .watch(&watched, RecursiveMode::Recursive)
        .map_err(|error| format!("cannot watch {}: {error}", watched.display()))?;

    let _keys = Keys::start(tx);
    let mut passed = false;
    let mut reason = String::from("started");
    // The lessons at full marks in the last run, and what its reset did.
    let (mut before, mut notice) = (None, None);
    'runs: loop {
        clear();
        println!("grading ({reason})…");
        let started = Instant::now();
        let graded = scorecard::score(options);
        let took = started.elapsed();
        // Saves made while the run was building belong to the next run.
        let mut pending = None;
        while let Ok(event) = events.try_recv() {
            match event {
                Event::Saved(path) => pending = Some(path),
                Event::Key(b'q' | 3 | 4) | Event::Closed => break 'runs,
                Event::Key(_) => {}
            }
        }
        let mut screen = Screen::new(graded, folder, took);
        screen.extras = Extras::new(&checkout, screen.score.as_ref(), before.as_deref());
        screen.extras.notice = notice.take();
        before = Some(screen.extras.full());
        passed = screen.passed();
        screen.draw();
        if let Some(path) = pending {
            reason = format!(
                "{} saved while the last run was going",
                shown(&checkout, &path)
            );
            settle(&events);
            continue;
        }
        loop {
            match events.recv() {
                Ok(Event::Saved(path)) => {
                    reason = format!("{} saved", shown(&checkout, &path));
                    notice = screen.extras.notice.take();
                    settle(&events);
                    continue 'runs;
                }
                Ok(Event::Key(key)) if screen.extras.key(key) == Action::Draw => screen.draw(),
                Ok(Event::Key(b'h' | b'H')) if screen.extras.shows_next() => {
                    screen.next_hint();
                    screen.draw();
                }
                Ok(Event::Key(b'r' | b'R')) => {
                    reason = "asked with r".to_owned();
                    continue 'runs;
                }
                Ok(Event::Key(b'q' | b'Q' | 3 | 4)) | Ok(Event::Closed) | Err(_) => break 'runs,
                Ok(Event::Key(_)) => {}
            }
        }
    }
    drop(_keys);
    println!();
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Waits until no file has changed for [`SETTLE`].
fn settle(events: &Receiver<Event>) {
    loop {
        match events.recv_timeout(SETTLE) {
            Ok(Event::Saved(_)) => {}
            Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// An exercise file: Rust, or lesson 8's SQL (`exercises/postgres/contract.sql`).
fn is_source(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == "rs" || extension == "sql")
}

fn shown(checkout: &Path, path: &Path) -> String {
    path.strip_prefix(checkout)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Clears the terminal and puts the cursor at its top left.
fn clear() {
    print!("\x1b[2J\x1b[H");
    let _ = std::io::stdout().flush();
}

/// One run's screen, and how far the learner has asked into its hint.
struct Screen {
    /// The bars, and what kept the run from scoring (above the claim).
    text: String,
    /// The next failing claim, or that every claim passes.
    next: String,
    /// The last line's end: what is watched, how long the run took.
    keys: String,
    /// The next failing claim's hint and its track, if a claim fails.
    hint: Option<hints::Hint>,
    level: usize,
    passed: bool,
    /// The run's score, if it ran.
    score: Option<crate::score::Score>,
    /// The reference for a lesson at full marks, and a reset.
    extras: Extras,
}

impl Screen {
    fn new(graded: Result<Graded, String>, folder: &str, took: Duration) -> Screen {
        let (mut text, mut next_text) = (String::new(), String::new());
        let (mut hint, mut passed, mut score) = (None, false, None);
        match graded {
            Err(error) => {
                let _ = writeln!(text, "the grader could not run: {error}");
            }
            Ok(graded) => {
                passed = graded.score.full_marks();
                for track in &graded.score.tracks {
                    text.push_str(&bars(track, graded.solutions));
                }
                if let Some(why) = &graded.unsandboxed {
                    let _ = writeln!(text, "\ngraded WITHOUT the sandbox ({why})");
                }
                if let Some(problem) = &graded.problem {
                    // This screen grades again on every save.
                    let problem =
                        problem.replace(scorecard::AGAIN, "then save: this screen grades again");
                    let _ = writeln!(text, "\n{problem}");
                }
                let next = graded
                    .score
                    .tracks
                    .iter()
                    .find_map(|track| Some((track.track, track.first_not_passing()?)));
                match next {
                    Some((track, claim)) => {
                        let (told, found) = next_claim(track, claim);
                        next_text.push_str(&told);
                        hint = found;
                    }
                    None => {
                        for track in &graded.score.tracks {
                            let _ = writeln!(
                                next_text,
                                "\n{}: {}",
                                track.track.name(),
                                scorecard::all_pass(track)
                            );
                        }
                    }
                }
                score = Some(graded.score);
            }
        }
        let keys = format!("watching {folder}/, last run {:.1} s", took.as_secs_f64());
        Screen {
            text,
            next: next_text,
            keys,
            hint,
            level: 1,
            passed,
            score,
            extras: Extras::new(Path::new("."), None, None),
        }
    }

    fn passed(&self) -> bool {
        self.passed
    }

    fn next_hint(&mut self) {
        if self.hint.is_some() && self.level < 3 {
            self.level += 1;
        }
    }

    fn draw(&self) {
        clear();
        let size = crate::terminal::size();
        let hint_key = if self.hint.is_some() {
            "[h] next hint  "
        } else {
            ""
        };
        // A question (reset which file? y/N) takes every key as its answer.
        let again = if self.extras.asks() {
            ""
        } else {
            "[r] run again  [q] quit"
        };
        let mut keys = format!("{}{again}   {}", self.extras.keys(), self.keys);
        let (top, next) = match self.extras.text(size.map(|(width, _)| width)) {
            Some((text, alone)) => (if alone { "" } else { self.text.as_str() }, text),
            None => {
                keys = format!("{hint_key}{keys}");
                let mut next = self.extras.banner();
                next.push_str(&self.next);
                if let Some(hint) = &self.hint {
                    for level in 2..=self.level {
                        let _ = write!(next, "\n  hint, level {level} of 3: {}", hint.level(level));
                    }
                }
                (self.text.as_str(), next)
            }
        };
        let lines = fit(top, &next, &keys, size);
        // Raw mode leaves output processing on: "\n" still starts a line.
        print!("{}", lines.join("\n"));
        let _ = std::io::stdout().flush();
    }
}

/// The screen's lines for a terminal of `size` (columns, rows): no line
/// longer than the width, so the terminal never wraps one, and no more
/// lines than the rows, so nothing scrolls away. The bars are cut at the
/// width; the next claim's lines are broken between words, a continued
/// line indented under its value. When the rows are short, the next
/// claim comes first: the bars give way (each track's heading, with its
/// points, stays while it fits), then the end of the claim's text, cut
/// with "…". The keys are always the last line. Without a size (not a
/// terminal), everything as it is.
fn fit(top: &str, next: &str, keys: &str, size: Option<(usize, usize)>) -> Vec<String> {
    let Some((width, height)) = size else {
        let mut all: Vec<String> = top.lines().chain(next.lines()).map(str::to_owned).collect();
        all.extend([String::new(), keys.to_owned()]);
        return all;
    };
    let top: Vec<String> = top.lines().map(|line| cut(line, width)).collect();
    let mut next: Vec<String> = next.lines().flat_map(|line| wrap(line, width)).collect();
    // The keys, and the blank line above them.
    let rows = height.saturating_sub(2);
    if next.len() > rows {
        next.truncate(rows.saturating_sub(1));
        next.push(cut("  …", width));
    }
    let room = rows - next.len();
    let top: Vec<String> = if top.len() <= room {
        top
    } else {
        // Headings (a track's name and points) before the bars.
        top.into_iter()
            .filter(|line| !line.starts_with(' ') && !line.is_empty())
            .take(room)
            .collect()
    };
    let mut lines = top;
    lines.extend(next);
    lines.extend([String::new(), cut(keys, width)]);
    lines
}

/// `line` cut to `width` characters, its end shown as "…".
fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let kept: String = line.chars().take(width.saturating_sub(1)).collect();
    let mut kept = kept.trim_end().to_owned();
    kept.push('…');
    kept
}

/// `line` broken between words into lines of at most `width` characters;
/// a continued line is indented under the text after its label
/// (`  expected: `), or under the line's own indent. A word longer than
/// the room is cut.
fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_owned()];
    }
    let indent = line.len() - line.trim_start().len();
    // After a label ("step:", "hint, level 2 of 3:"), the value's column.
    let label = line
        .find(": ")
        .filter(|&at| at < 24)
        .map(|at| at + 2 + line[at + 2..].len() - line[at + 2..].trim_start().len())
        .unwrap_or(indent);
    // On a narrow terminal, continued lines keep only the line's indent.
    let hanging = if label + 20 > width { indent } else { label };
    // The label keeps its own spacing; the words after it are rejoined.
    let start = if label < line.len() { label } else { indent };
    let mut lines: Vec<String> = Vec::new();
    let mut current = line[..start].to_owned();
    let mut empty = true;
    for word in line[start..].split(' ').filter(|word| !word.is_empty()) {
        let length = current.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && length > width {
            lines.push(std::mem::replace(&mut current, " ".repeat(hanging)));
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    lines.push(current);
    lines.into_iter().map(|line| cut(&line, width)).collect()
}

/// A bar per lesson of one track: points earned of the lesson's points.
fn bars(track: &TrackScore, solutions: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {}    points {}/{}",
        track.track.name(),
        scorecard::implementation(track.track, solutions),
        track.earned(),
        track.total()
    );
    for lesson in LESSONS {
        let claims: Vec<&ClaimScore> = track
            .claims
            .iter()
            .filter(|claim| claim.claim.lesson().id == lesson.id)
            .collect();
        if claims.is_empty() {
            continue;
        }
        let total: u32 = claims.iter().map(|claim| claim.claim.points).sum();
        let earned: u32 = claims.iter().map(|claim| claim.earned).sum();
        let passing = claims
            .iter()
            .filter(|claim| claim.status == Status::Pass)
            .count();
        let filled = if total == 0 {
            0
        } else {
            (earned as usize * BAR).div_ceil(total as usize)
        };
        let _ = writeln!(
            out,
            "  {:<4} {}{}  {earned:>2}/{total:<2} points, {passing}/{} claims  {}",
            lesson.id,
            "#".repeat(filled),
            ".".repeat(BAR - filled),
            claims.len(),
            lesson.title
        );
    }
    out
}

/// The next failing claim: its statement, the step that failed as the test
/// told it, and the hint that step asked for (level 1 is in the test's own
/// message); no hint for a stub, which has nothing to hint at yet.
fn next_claim(track: Track, claim: &ClaimScore) -> (String, Option<hints::Hint>) {
    let mut out = String::new();
    let statement = claim.claim;
    let _ = writeln!(
        out,
        "\nnext: {} {} ({})",
        statement.id,
        statement.text,
        track.name()
    );
    let mut hint = hints::for_claim(statement, track);
    match &claim.first_failure {
        Some((test, failure)) => {
            let _ = writeln!(out, "  test:     {test}");
            let mut hinted = false;
            for line in failure.message.lines().map(str::trim_end) {
                let trimmed = line.trim_start();
                if trimmed.is_empty() {
                    continue;
                }
                // The heading repeats the statement; a stub's one line
                // says what to open instead.
                if trimmed.starts_with("claim ") {
                    if let Some((_, said)) = trimmed.split_once(": ") {
                        if said != statement.text {
                            let _ = writeln!(out, "  {said}");
                        }
                    }
                    continue;
                }
                if let Some(id) = hint_id(trimmed) {
                    if let Some(found) = hints::by_id(id, track) {
                        hint = found;
                    }
                    continue;
                }
                hinted |= trimmed.starts_with("hint:");
                let _ = writeln!(out, "  {trimmed}");
            }
            if failure.message.contains(" is not implemented yet: open ") {
                // A stub: the claim's hint would speak of code not written.
                let _ = writeln!(out, "  write it, save, and this screen grades again");
                return (out, None);
            }
            if !hinted {
                let _ = writeln!(out, "  hint:     {}", hint.level(1));
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  no result yet: its tests never reported\n  hint:     {}",
                hint.level(1)
            );
        }
    }
    (out, Some(hint))
}

/// The hint id at the end of a failure's `more:` line (`[hint record-missing]`).
fn hint_id(line: &str) -> Option<&str> {
    let (_, tail) = line.rsplit_once("[hint ")?;
    tail.strip_suffix(']')
}

/// Keys from standard input, one byte at a time on a terminal (no echo, no
/// line editing, Ctrl-C as a byte) until dropped, when the terminal gets its
/// settings back.
struct Keys {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl Keys {
    fn start(tx: Sender<Event>) -> Keys {
        #[cfg(unix)]
        let saved = raw_terminal();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut byte = [0u8; 1];
            loop {
                match stdin.read(&mut byte) {
                    Ok(1) if byte[0] == b'\n' || byte[0] == b'\r' => {}
                    Ok(1) => {
                        if tx.send(Event::Key(byte[0])).is_err() {
                            return;
                        }
                    }
                    _ => {
                        let _ = tx.send(Event::Closed);
                        return;
                    }
                }
            }
        });
        Keys {
            #[cfg(unix)]
            saved,
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                saved,
            );
        }
    }
}

/// Turns off echo, line editing and the interrupt keys of the terminal on
/// standard input, and returns its settings as they were; `None` when
/// standard input is not a terminal.
#[cfg(unix)]
fn raw_terminal() -> Option<rustix::termios::Termios> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).ok()?;
    let mut raw = saved.clone();
    raw.local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
    Some(saved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_id_is_read_from_the_more_line() {
        assert_eq!(
            hint_id("more:     cargo grade --hint L4.9   [hint stale-replayed]"),
            Some("stale-replayed")
        );
        assert_eq!(hint_id("got:      applied"), None);
    }

    #[test]
    fn the_screen_fits_the_terminal_and_breaks_between_words() {
        let top = "SQLite: your exercises (exercises/)    points 0/35\n  L1   ....................   0/3  points, 0/3 claims  Authority can become stale\n  L2   ....................   0/7  points, 0/7 claims  An explicit contract per resource\n";
        let next = "\nnext: L2.2 an invented higher generation is rejected as never issued, distinct from stale (SQLite)\n  hint:     Your apply accepted a generation that is not the installed one. Which comparison lets a higher one through?\n";
        let keys = "[h] next hint  [r] run again  [q] quit   watching exercises/, last run 3.6 s";
        let lines = fit(top, next, keys, Some((40, 12)));
        assert!(lines.len() <= 12, "{lines:#?}");
        assert!(
            lines.iter().all(|line| line.chars().count() <= 40),
            "{lines:#?}"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("[h] next hint  [r] run again  [q] quit…")
        );
        // Short of rows: the claim stays, the bars give way, the heading stays.
        assert!(
            lines.iter().any(|line| line.starts_with("next: L2.2")),
            "{lines:#?}"
        );
        assert!(lines[0].starts_with("SQLite:"), "{lines:#?}");
        // Every word is whole on some line.
        let words: Vec<&str> = lines
            .iter()
            .flat_map(|line| line.split_whitespace())
            .collect();
        assert!(words.contains(&"comparison"), "{lines:#?}");
        // A continued hint is indented under its value.
        let at = lines
            .iter()
            .position(|line| line.starts_with("  hint:"))
            .unwrap();
        assert!(lines[at].starts_with("  hint:     Your"), "{lines:#?}");
        assert!(lines[at + 1].starts_with("            "), "{lines:#?}");
        // Room enough: everything, in order.
        let all = fit(top, next, keys, Some((200, 50)));
        assert_eq!(all.len(), 3 + 3 + 2);
    }

    #[test]
    fn only_exercise_sources_wake_the_loop() {
        assert!(is_source(Path::new("exercises/apply.rs")));
        assert!(is_source(Path::new("exercises/postgres/contract.sql")));
        assert!(!is_source(Path::new("exercises/.apply.rs.swp")));
        assert!(!is_source(Path::new("exercises/4913")));
    }
}
