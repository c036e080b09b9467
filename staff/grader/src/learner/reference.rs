//! The reference's lines for a lesson, and the learner's lines beside them.
//!
//! A course author marks the reference (`solutions/`, the server tracks'
//! folders under it too) with a comment line of its own naming lessons:
//! `// L3:` (`-- L8:` in SQL), or several at once, `// L3, L4, L5:`. The
//! marker opens a region of the lines after it, which ends at the next
//! marker, at the first line less indented than the marker (the end of the
//! block it is in: a function's closing brace, PL/pgSQL's `END`), or at the
//! end of the file. The marker itself is not shown. A unit test checks that
//! every lesson with a claim on a track has a region in each file its claims
//! judge, so the markers cannot fall behind the catalogue.
//!
//! The learner's side is kept simple: the function (or SQL function) of the
//! same name as the one the region is in, whole; no diff.

use lab_claims::{CLAIMS, Track};

/// A run of the reference's lines that a marker names lessons for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The lessons the marker names (`L3`).
    pub lessons: Vec<String>,
    /// The line number (from 1) of the region's first line, after the marker.
    pub first: usize,
    /// The lines, as they are in the file.
    pub lines: Vec<String>,
    /// The function the region is in, or starts: `apply`; `None` for lines
    /// outside any (SQL's grants).
    pub item: Option<String>,
}

impl Region {
    /// Whether the marker names `lesson`.
    pub fn teaches(&self, lesson: &str) -> bool {
        self.lessons.iter().any(|named| named == lesson)
    }
}

/// The lessons a marker line names, or `None` if the line is not a marker:
/// a comment alone on its line, `// L3:` or `-- L1, L2:`.
fn marker(line: &str) -> Option<Vec<String>> {
    let text = line.trim();
    let body = text
        .strip_prefix("//")
        .or_else(|| text.strip_prefix("--"))?
        .trim();
    let names = body.strip_suffix(':')?;
    let lessons: Vec<String> = names.split(',').map(str::trim).map(str::to_owned).collect();
    let is_lesson = |name: &String| {
        name.strip_prefix('L')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
    };
    lessons.iter().all(is_lesson).then_some(lessons)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The name of the function a line starts, if it starts one: Rust's
/// `pub fn apply(`, SQL's `CREATE FUNCTION apply(` (or `CREATE OR REPLACE`).
fn item_start(line: &str) -> Option<String> {
    let text = line.trim_start();
    let rust = ["pub fn ", "fn ", "pub(crate) fn "]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix));
    let rest = rust.or_else(|| {
        let upper = text.to_ascii_uppercase();
        ["CREATE FUNCTION ", "CREATE OR REPLACE FUNCTION "]
            .iter()
            .find(|prefix| upper.starts_with(*prefix))
            .map(|prefix| &text[prefix.len()..])
    })?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The marked regions of a reference file, in the file's order.
pub fn regions(source: &str) -> Vec<Region> {
    let lines: Vec<&str> = source.lines().collect();
    let mut regions = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some(lessons) = marker(lines[at]) else {
            at += 1;
            continue;
        };
        let depth = indent(lines[at]);
        let mut end = at + 1;
        while end < lines.len() {
            let line = lines[end];
            if marker(line).is_some() || (!line.trim().is_empty() && indent(line) < depth) {
                break;
            }
            end += 1;
        }
        let mut body: Vec<String> = lines[at + 1..end].iter().map(|s| (*s).to_owned()).collect();
        while body.last().is_some_and(|line| line.trim().is_empty()) {
            body.pop();
        }
        // The function the region starts, or else the one it is inside.
        let item = body.iter().find_map(|line| item_start(line)).or_else(|| {
            (depth > 0)
                .then(|| lines[..at].iter().rev().find_map(|line| item_start(line)))
                .flatten()
        });
        regions.push(Region {
            lessons,
            first: at + 2,
            lines: body,
            item,
        });
        at = end;
    }
    regions
}

/// The learner's function `name` in `source`: the number of its first
/// line, counted from 1, and its lines, from its signature to its closing
/// brace (Rust) or the `$$;` that ends its body (SQL); `None` if the file
/// has no such function.
pub fn function(source: &str, name: &str) -> Option<(usize, Vec<String>)> {
    let lines: Vec<&str> = source.lines().collect();
    let start = lines
        .iter()
        .position(|line| item_start(line).as_deref() == Some(name))?;
    let sql = lines[start]
        .trim_start()
        .to_ascii_uppercase()
        .starts_with("CREATE");
    let depth = indent(lines[start]);
    let mut dollars = 0;
    let mut end = lines.len();
    for (at, line) in lines.iter().enumerate().skip(start) {
        let done = if sql {
            dollars += line.matches("$$").count();
            dollars >= 2 && line.trim_end().ends_with(';')
        } else {
            at > start && indent(line) == depth && line.trim_start().starts_with('}')
                || (at == start && line.trim_end().ends_with('}'))
        };
        if done {
            end = at + 1;
            break;
        }
    }
    Some((
        start + 1,
        lines[start..end].iter().map(|s| (*s).to_owned()).collect(),
    ))
}

/// The reference files of a track, each with the learner's file it answers.
pub fn files(track: Track) -> Vec<(String, String)> {
    let mut files: Vec<String> = Vec::new();
    for claim in CLAIMS.iter().filter(|claim| claim.on(track)) {
        for file in claim.files_on(track) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    // install_generation before apply, as the learner meets them.
    files.sort_by_key(|file| !file.contains("install_generation"));
    files
        .into_iter()
        .map(|file| (file.replacen("exercises/", "solutions/", 1), file))
        .collect()
}

/// The files a lesson's claims judge on `track`, in [`files`]' order.
pub fn lesson_files(lesson: &str, track: Track) -> Vec<String> {
    let judged: Vec<String> = CLAIMS
        .iter()
        .filter(|claim| claim.on(track) && claim.lesson().id == lesson)
        .flat_map(|claim| claim.files_on(track))
        .collect();
    files(track)
        .into_iter()
        .map(|(_, file)| file)
        .filter(|file| judged.contains(file))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_claims::LESSONS;

    const SAMPLE: &str = "\
pub fn apply(x: i64) -> i64 {
    // L6:
    if x < 0 {
        return 0;
    }

    // L3, L4:
    // The lock first.
    let y = x + 1;
    y
}

// L8:
GRANT EXECUTE ON FUNCTION apply TO worker;
";

    #[test]
    fn a_marker_opens_a_region_to_the_next_marker_or_the_end_of_its_block() {
        let found = regions(SAMPLE);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert_eq!(found[0].lessons, ["L6"]);
        assert_eq!(found[0].first, 3);
        // The blank line before the next marker is not part of it.
        assert_eq!(found[0].lines.len(), 3, "{found:#?}");
        assert_eq!(found[0].item.as_deref(), Some("apply"));
        assert_eq!(found[1].lessons, ["L3", "L4"]);
        assert!(found[1].teaches("L4") && !found[1].teaches("L6"));
        // Up to the function's closing brace, which is less indented.
        assert_eq!(found[1].lines.last().map(String::as_str), Some("    y"));
        // Outside any function.
        assert_eq!(found[2].item, None);
        assert_eq!(
            found[2].lines,
            ["GRANT EXECUTE ON FUNCTION apply TO worker;"]
        );
    }

    #[test]
    fn only_a_comment_of_lesson_names_alone_is_a_marker() {
        assert_eq!(marker("    // L3:"), Some(vec!["L3".to_owned()]));
        assert_eq!(
            marker("-- L1, L2:"),
            Some(vec!["L1".to_owned(), "L2".to_owned()])
        );
        assert_eq!(marker("-- L8.3: what must hold"), None);
        assert_eq!(marker("// L3: the lock"), None);
        assert_eq!(marker("// Lock:"), None);
        assert_eq!(marker("let l3 = 1;"), None);
    }

    #[test]
    fn the_learners_function_is_found_by_name() {
        let (first, lines) = function(SAMPLE, "apply").unwrap();
        assert_eq!(first, 1);
        assert_eq!(lines.last().map(String::as_str), Some("}"));
        assert_eq!(lines.len(), 11);
        let sql = "-- x\nCREATE FUNCTION apply(a int)\nAS $$\nBEGIN\nEND\n$$;\nGRANT x;\n";
        let (first, lines) = function(sql, "apply").unwrap();
        assert_eq!((first, lines.len()), (2, 5));
        assert!(function(sql, "install_generation").is_none());
    }

    /// Every lesson with a claim on a track has a region in the reference
    /// of each file its claims judge there, and every region names a lesson
    /// that has claims on the track.
    #[test]
    fn every_lesson_of_a_track_is_marked_in_its_reference() {
        let root = crate::engine::checkout::repository();
        for track in Track::ALL {
            for (reference, _) in files(track) {
                let source = std::fs::read_to_string(root.join(&reference))
                    .unwrap_or_else(|error| panic!("{reference}: {error}"));
                let found = regions(&source);
                for region in &found {
                    for lesson in &region.lessons {
                        assert!(
                            lesson_files(lesson, track).iter().any(|file| file.replacen(
                                "exercises/",
                                "solutions/",
                                1
                            ) == reference),
                            "{reference}:{} names {lesson}, which judges nothing there on {}",
                            region.first - 1,
                            track.name()
                        );
                    }
                    assert!(
                        !region.lines.is_empty(),
                        "{reference}:{} is empty",
                        region.first
                    );
                }
                for lesson in LESSONS {
                    let judged = lesson_files(lesson.id, track)
                        .iter()
                        .any(|file| file.replacen("exercises/", "solutions/", 1) == reference);
                    if judged {
                        assert!(
                            found.iter().any(|region| region.teaches(lesson.id)),
                            "{reference} has no `// {}:` region, and its claims judge it on {}",
                            lesson.id,
                            track.name()
                        );
                    }
                }
            }
        }
    }
}
