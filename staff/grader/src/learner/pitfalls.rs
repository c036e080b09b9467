//! The pitfalls a lesson's claims catch: the committed mutants
//! (`staff/class*/mutant-*`) that lose a claim of the lesson on a track, as
//! the classes' gradebooks record, each with the one line its header
//! comment says about the mistake.
//!
//! Read at run time from the checkout, as the grader runs from it: a new
//! mutant with its gradebook row shows up here with nothing else to write.

use std::fs;
use std::path::Path;

use lab_claims::Track;

/// One committed mutant that loses a claim of a lesson.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pitfall {
    /// Its class's folder (`class-postgres`) and its own (`mutant-…`).
    pub class: String,
    /// Its folder's name.
    pub name: String,
    /// The mistake, in one line, from its header comment.
    pub mistake: String,
    /// The lesson's claims it loses on the track.
    pub loses: Vec<&'static str>,
    /// How many claims it loses in all, on every track.
    pub loses_in_all: usize,
}

/// The committed mutants under `root/staff/` that lose a claim of `lesson`
/// on `track`: the ones that lose most of the lesson's claims first, then
/// the ones that lose least elsewhere (the lesson's own mistakes).
pub fn for_lesson(root: &Path, lesson: &str, track: Track) -> Vec<Pitfall> {
    let mut classes: Vec<_> = fs::read_dir(root.join("staff"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join("gradebook.csv").is_file())
        .collect();
    classes.sort();
    let mut found = Vec::new();
    for class in classes {
        let Ok(book) = fs::read_to_string(class.join("gradebook.csv")) else {
            continue;
        };
        let class_name = file_name(&class);
        for (name, lost) in losses(&book) {
            let loses: Vec<&'static str> = lost
                .iter()
                .filter(|(_, on)| *on == track)
                .map(|(claim, _)| claim.id)
                .filter(|id| lab_claims::claim(id).is_some_and(|c| c.lesson().id == lesson))
                .collect();
            if loses.is_empty() {
                continue;
            }
            found.push(Pitfall {
                mistake: mistake(&class.join(&name)),
                class: class_name.clone(),
                loses_in_all: lost.len(),
                name,
                loses,
            });
        }
    }
    found.sort_by(|a, b| {
        (b.loses.len(), a.loses_in_all, &a.name).cmp(&(a.loses.len(), b.loses_in_all, &b.name))
    });
    found
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A gradebook's mutants, each with the claims it loses: a cell `0` where
/// the reference's row has points. A column is a SQLite claim (`L4.2`) or
/// a track's key and a claim (`postgres L4.2`).
fn losses(book: &str) -> Vec<(String, Vec<(&'static lab_claims::Claim, Track)>)> {
    let mut rows = book.lines().map(|line| line.split(',').collect::<Vec<_>>());
    let Some(header) = rows.next() else {
        return Vec::new();
    };
    let rows: Vec<Vec<&str>> = rows.collect();
    let Some(reference) = rows.iter().find(|row| row.first() == Some(&"reference")) else {
        return Vec::new();
    };
    let columns: Vec<Option<(&'static lab_claims::Claim, Track)>> =
        header.iter().map(|column| column_claim(column)).collect();
    rows.iter()
        .filter(|row| row.first().is_some_and(|name| name.starts_with("mutant")))
        .map(|row| {
            let lost = columns
                .iter()
                .enumerate()
                .filter_map(|(at, column)| {
                    let column = (*column)?;
                    let lost = row.get(at) == Some(&"0")
                        && reference.get(at).is_some_and(|cell| *cell != "0");
                    lost.then_some(column)
                })
                .collect();
            (row[0].to_owned(), lost)
        })
        .collect()
}

/// A gradebook column's claim and track; `None` for `total` and the like.
fn column_claim(column: &str) -> Option<(&'static lab_claims::Claim, Track)> {
    let (track, id) = match column.split_once(' ') {
        Some((key, id)) => (Track::ALL.into_iter().find(|track| track.key() == key)?, id),
        None => (Track::Sqlite, column),
    };
    lab_claims::claim(id).map(|claim| (claim, track))
}

/// The mistake a mutant makes, in one line: the first sentence after
/// `MUTANT:` (or `MUTANT (… track):`, `Mutant:`) in the header comment of
/// its own files; its folder's name in words when no header says it.
fn mistake(folder: &Path) -> String {
    let mut files = Vec::new();
    own_sources(folder, &mut files);
    files.sort();
    for file in files {
        let Ok(source) = fs::read_to_string(&file) else {
            continue;
        };
        if let Some(said) = header_mistake(&source) {
            return said;
        }
    }
    let name = file_name(folder);
    name.strip_prefix("mutant-")
        .unwrap_or(&name)
        .replace('-', " ")
}

/// The `.rs` and `.sql` files of a mutant's folder that are its own, not
/// links to the reference.
fn own_sources(folder: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        let Ok(kind) = fs::symlink_metadata(&path).map(|meta| meta.file_type()) else {
            continue;
        };
        if kind.is_dir() {
            own_sources(&path, out);
        } else if kind.is_file()
            && path
                .extension()
                .is_some_and(|extension| extension == "rs" || extension == "sql")
        {
            out.push(path);
        }
    }
}

/// The first sentence after a header's `MUTANT` label, joined across the
/// comment's lines.
fn header_mistake(source: &str) -> Option<String> {
    let comment: Vec<&str> = source
        .lines()
        .take_while(|line| line.starts_with("//!") || line.starts_with("--"))
        .map(|line| {
            line.trim_start_matches("//!")
                .trim_start_matches("--")
                .trim()
        })
        .collect();
    let start = comment
        .iter()
        .position(|line| line.starts_with("MUTANT") || line.starts_with("Mutant:"))?;
    let first = comment[start];
    let (_, said) = first.split_once(": ")?;
    let mut text = said.trim().to_owned();
    for line in &comment[start + 1..] {
        if text.ends_with('.') || line.is_empty() {
            break;
        }
        text.push(' ');
        text.push_str(line);
    }
    // The first sentence: up to ". " (or the end).
    let sentence = match text.find(". ") {
        Some(at) => &text[..=at],
        None => &text,
    };
    Some(sentence.trim_end_matches('.').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headers_mistake_is_its_first_sentence() {
        assert_eq!(
            header_mistake(
                "//! MUTANT: accepting invented numbers (`>=` instead of `==`).\n\
                 //! Changed from the reference: the branch is gone.\n"
            )
            .as_deref(),
            Some("accepting invented numbers (`>=` instead of `==`)")
        );
        assert_eq!(
            header_mistake(
                "//! MUTANT (PostgreSQL track): the generation checked in one transaction, the\n\
                 //! effect written in a second. More.\n"
            )
            .as_deref(),
            Some("the generation checked in one transaction, the effect written in a second")
        );
        assert_eq!(
            header_mistake(
                "//! Mutant: the fencing token is the worker's lease id. Lease ids follow\n\
                 //! the order leases were granted in.\n"
            )
            .as_deref(),
            Some("the fencing token is the worker's lease id")
        );
        assert_eq!(header_mistake("-- mutant-x: the contract\nCREATE"), None);
    }

    #[test]
    fn a_gradebook_says_which_claims_a_mutant_loses() {
        let book = "submission,L2.2,L3.6,total,postgres L2.2,postgres total\n\
                    mutant-a,0,0,33,0,31\n\
                    reference,1,0,35,1,32\n";
        let rows = losses(book);
        assert_eq!(rows.len(), 1);
        let (name, lost) = &rows[0];
        assert_eq!(name, "mutant-a");
        // L3.6 earns nothing on the reference either: not a loss.
        let lost: Vec<(&str, Track)> = lost.iter().map(|(c, t)| (c.id, *t)).collect();
        assert_eq!(lost, [("L2.2", Track::Sqlite), ("L2.2", Track::Postgres)]);
    }

    /// The committed classes: L2 on SQLite is lost by the `>=` mutant, told
    /// by its header; L8's SQL mutants, whose header says nothing, by name.
    #[test]
    fn the_committed_mutants_are_the_lessons_pitfalls() {
        let root = crate::engine::checkout::repository();
        let l2 = for_lesson(&root, "L2", Track::Sqlite);
        let ge = l2
            .iter()
            .find(|pitfall| pitfall.name == "mutant-ge-instead-of-eq" && pitfall.class == "class")
            .unwrap_or_else(|| panic!("{l2:#?}"));
        assert_eq!(
            ge.mistake,
            "accepting invented numbers (`>=` instead of `==`)"
        );
        assert!(ge.loses.contains(&"L2.2"), "{ge:#?}");
        // Only this track's losses: no PostgreSQL class mutant on SQLite.
        assert!(l2.iter().all(|pitfall| pitfall.class == "class"), "{l2:#?}");
        let l8 = for_lesson(&root, "L8", Track::PostgresSql);
        assert!(
            l8.iter()
                .any(|pitfall| pitfall.mistake == "keeps public execute"),
            "{l8:#?}"
        );
        let l7 = for_lesson(&root, "L7", Track::Etcd);
        assert!(
            l7.iter()
                .any(|pitfall| pitfall.mistake == "holding the lock is taken as proof"),
            "{l7:#?}"
        );
    }
}
