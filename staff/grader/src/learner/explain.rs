//! `cargo grade --explain L3`: once a lesson is at full marks, the
//! reference's lines for it beside the learner's own, and the pitfalls its
//! claims catch, so that a learner who passed by trial sees why. The watch
//! mode shows the same with `s`.
//!
//! Before full marks it refuses: the reference's lines would hand over
//! what is left to find. The reference's lines are the regions its course
//! authors marked for the lesson ([`crate::learner::reference`]); the pitfalls are
//! the committed mutants that lose its claims ([`crate::learner::pitfalls`]).

use std::fmt::Write as _;
use std::path::Path;

use crate::engine::score::{Status, TrackScore};
use crate::learner::pitfalls;
use crate::learner::reference;
use lab_claims::{LESSONS, Lesson, Track};

/// The narrowest terminal that gets the reference and the learner's lines
/// side by side; a narrower one gets them one above the other.
pub const SIDE_BY_SIDE: usize = 120;

/// How many pitfalls are listed; the rest are counted.
const PITFALLS: usize = 6;

/// The lesson named by `what`: a lesson (`L3`, `l3`) or one of its claims
/// (`L3.2`).
pub fn lesson(what: &str) -> Option<Lesson> {
    let id = what.split('.').next().unwrap_or(what).to_ascii_uppercase();
    LESSONS.into_iter().find(|lesson| lesson.id == id)
}

/// The lessons of a track whose every graded claim passes, in order.
pub fn full_lessons(score: &TrackScore) -> Vec<&'static str> {
    LESSONS
        .iter()
        .map(|lesson| lesson.id)
        .filter(|&lesson| points(score, lesson).is_some_and(|(_, _, full)| full))
        .collect()
}

/// A lesson's points on a track (earned, total) and whether every graded
/// claim of it passed; `None` if the lesson has no graded claim there.
pub fn points(score: &TrackScore, lesson: &str) -> Option<(u32, u32, bool)> {
    let claims: Vec<_> = score
        .claims
        .iter()
        .filter(|claim| claim.claim.lesson().id == lesson && claim.claim.points > 0)
        .collect();
    if claims.is_empty() {
        return None;
    }
    Some((
        claims.iter().map(|claim| claim.earned).sum(),
        claims.iter().map(|claim| claim.claim.points).sum(),
        claims.iter().all(|claim| claim.status == Status::Pass),
    ))
}

/// The command that shows a lesson's explanation on a track.
pub fn command(lesson: &str, track: Track) -> String {
    format!("cargo grade --explain {lesson}{}", track.grade_flag())
}

/// The explanation of a lesson on a track: for each file its claims judge,
/// the reference's marked lines beside (at least [`SIDE_BY_SIDE`] columns)
/// or above the learner's function of the same name; then the pitfalls.
/// Without a width (not a terminal), one above the other, uncut.
pub fn render(root: &Path, lesson: Lesson, track: Track, width: Option<usize>) -> String {
    let mut out = String::new();
    let heading = format!(
        "{} {}: full marks on {}.",
        lesson.id,
        lesson.title,
        track.name()
    );
    let _ = writeln!(
        out,
        "{}\nHow the reference does it, beside yours:",
        cut(&heading, width.unwrap_or(usize::MAX))
    );
    let judged = reference::lesson_files(lesson.id, track);
    for (solution, exercise) in reference::files(track) {
        if !judged.contains(&exercise) {
            continue;
        }
        let (left_title, left) = reference_side(root, &solution, lesson.id);
        let (right_title, right) = learner_side(root, &solution, &exercise, lesson.id);
        out.push('\n');
        match width {
            Some(width) if width >= SIDE_BY_SIDE => {
                let column = (width - 3) / 2;
                let _ = writeln!(
                    out,
                    "{} | {}",
                    pad(&left_title, column),
                    cut(&right_title, column)
                );
                let _ = writeln!(out, "{}-+-{}", "-".repeat(column), "-".repeat(column));
                for row in 0..left.len().max(right.len()) {
                    let left = left.get(row).map_or("", String::as_str);
                    let right = right.get(row).map_or("", String::as_str);
                    let line = format!("{} | {}", pad(left, column), cut(right, column));
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
            _ => {
                let width = width.unwrap_or(usize::MAX);
                for (title, lines) in [(left_title, left), (right_title, right)] {
                    let _ = writeln!(out, "{}", cut(&title, width));
                    for line in lines {
                        let _ = writeln!(out, "  {}", cut(&line, width.saturating_sub(2)));
                    }
                }
            }
        }
    }
    out.push_str(&pitfalls_text(root, lesson, track));
    out
}

/// The reference's regions of `lesson` in one file, each line numbered, a
/// `⋮` between regions that do not touch.
fn reference_side(root: &Path, solution: &str, lesson: &str) -> (String, Vec<String>) {
    let source = match std::fs::read_to_string(root.join(solution)) {
        Ok(source) => source,
        Err(error) => {
            return (
                format!("the reference, {solution}"),
                vec![error.to_string()],
            );
        }
    };
    let mut lines = Vec::new();
    let mut next = None;
    for region in reference::regions(&source)
        .into_iter()
        .filter(|region| region.teaches(lesson))
    {
        // A region after another of the lesson starts one line later, past
        // the marker between them.
        if next.is_some_and(|next| next + 1 < region.first) {
            lines.push("   ⋮".to_owned());
        }
        for (at, line) in region.lines.iter().enumerate() {
            lines.push(numbered(region.first + at, line));
        }
        next = Some(region.first + region.lines.len());
    }
    (format!("the reference, {solution}"), lines)
}

/// The learner's functions that the lesson's regions are in, by name; the
/// whole file when a region is in none, or the learner has no function of
/// that name.
fn learner_side(
    root: &Path,
    solution: &str,
    exercise: &str,
    lesson: &str,
) -> (String, Vec<String>) {
    let mine = match std::fs::read_to_string(root.join(exercise)) {
        Ok(source) => source,
        Err(error) => return (format!("yours, {exercise}"), vec![error.to_string()]),
    };
    let reference = std::fs::read_to_string(root.join(solution)).unwrap_or_default();
    let mut names: Vec<Option<String>> = Vec::new();
    for region in reference::regions(&reference) {
        if region.teaches(lesson) && !names.contains(&region.item) {
            names.push(region.item);
        }
    }
    let functions: Option<Vec<(String, usize, Vec<String>)>> = names
        .iter()
        .map(|name| {
            let name = name.as_ref()?;
            let (first, lines) = reference::function(&mine, name)?;
            Some((name.clone(), first, lines))
        })
        .collect();
    match functions {
        Some(functions) if !functions.is_empty() => {
            let shown: Vec<&str> = functions.iter().map(|(name, ..)| name.as_str()).collect();
            let mut lines = Vec::new();
            for (index, (_, first, body)) in functions.iter().enumerate() {
                if index > 0 {
                    lines.push("   ⋮".to_owned());
                }
                for (at, line) in body.iter().enumerate() {
                    lines.push(numbered(first + at, line));
                }
            }
            (format!("yours, {exercise}: {}", shown.join(", ")), lines)
        }
        _ => (
            format!("yours, {exercise}"),
            mine.lines()
                .enumerate()
                .map(|(at, line)| numbered(at + 1, line))
                .collect(),
        ),
    }
}

/// The pitfalls of the lesson on the track, at most [`PITFALLS`].
fn pitfalls_text(root: &Path, lesson: Lesson, track: Track) -> String {
    let found = pitfalls::for_lesson(root, lesson.id, track);
    let mut out = String::new();
    if found.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nThe mistakes {}'s claims catch on {} (committed mutants, staff/class*/):",
        lesson.id,
        track.name()
    );
    for pitfall in found.iter().take(PITFALLS) {
        let _ = writeln!(
            out,
            "  - {}\n    loses {}: staff/{}/{}/",
            pitfall.mistake,
            pitfall.loses.join(", "),
            pitfall.class,
            pitfall.name
        );
    }
    if found.len() > PITFALLS {
        let _ = writeln!(out, "  and {} more", found.len() - PITFALLS);
    }
    out
}

/// A source line with its number, tabs as four spaces.
fn numbered(number: usize, line: &str) -> String {
    format!("{number:>4}  {}", line.replace('\t', "    "))
}

/// `line` cut to `width` characters, its end shown as "…".
fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let mut kept: String = line.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

/// `line` cut or padded with spaces to exactly `width` characters.
fn pad(line: &str, width: usize) -> String {
    let cut = cut(line, width);
    let missing = width.saturating_sub(cut.chars().count());
    format!("{cut}{}", " ".repeat(missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lesson_is_named_by_itself_or_a_claim() {
        assert_eq!(lesson("L3").map(|l| l.id), Some("L3"));
        assert_eq!(lesson("l4.2").map(|l| l.id), Some("L4"));
        assert_eq!(lesson("L9"), None);
    }

    /// The committed reference against the stubs: the reference's lines of
    /// L3 on the left, the learner's whole `apply` on the right, no line
    /// wider than the terminal; stacked when it is narrow.
    #[test]
    fn the_reference_is_shown_beside_the_learners_function() {
        let root = crate::engine::checkout::repository();
        let l3 = lesson("L3").unwrap();
        let wide = render(&root, l3, Track::Sqlite, Some(140));
        // The code's lines fit; the pitfalls' sentences are the terminal's
        // to wrap.
        let code = |text: &str| text.split("\nThe mistakes").next().unwrap().to_owned();
        assert!(
            code(&wide).lines().all(|line| line.chars().count() <= 140),
            "{wide}"
        );
        let heading = wide
            .lines()
            .find(|line| line.starts_with("the reference, solutions/apply.rs"))
            .unwrap_or_else(|| panic!("{wide}"));
        assert!(
            heading.contains("| yours, exercises/apply.rs: apply"),
            "{wide}"
        );
        assert!(wide.contains("TransactionBehavior::Immediate"), "{wide}");
        // The marker itself is not shown.
        assert!(!wide.contains("// L3:"), "{wide}");
        // L3's claims judge both files.
        assert!(wide.contains("solutions/install_generation.rs"), "{wide}");
        let narrow = render(&root, l3, Track::Sqlite, Some(80));
        assert!(
            code(&narrow).lines().all(|line| line.chars().count() <= 80),
            "{narrow}"
        );
        assert!(!narrow.contains(" | "), "{narrow}");
        assert!(
            narrow.contains("\nyours, exercises/apply.rs: apply\n"),
            "{narrow}"
        );
        // L4 judges apply alone, and its pitfalls are listed.
        let l4 = render(&root, lesson("L4").unwrap(), Track::Sqlite, None);
        assert!(!l4.contains("install_generation.rs"), "{l4}");
        assert!(
            l4.contains("The mistakes L4's claims catch on SQLite"),
            "{l4}"
        );
        let listed = l4.lines().filter(|line| line.starts_with("  - ")).count();
        assert!((1..=PITFALLS).contains(&listed), "{l4}");
    }
}
