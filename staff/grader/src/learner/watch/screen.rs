//! The drawing: a run's state as one screen that fits the terminal, its
//! bars above, the next claim (or a view of a lesson at full marks) below
//! them, and the keys on its last line.

use std::fmt::Write as _;
use std::io::Write;

use super::state::State;

impl State {
    /// Clears the terminal and draws the screen.
    pub(super) fn draw(&self) {
        clear();
        let size = crate::learner::terminal::size();
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

/// Clears the terminal and puts the cursor at its top left.
pub(super) fn clear() {
    print!("\x1b[2J\x1b[H");
    let _ = std::io::stdout().flush();
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
