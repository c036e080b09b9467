//! What the generated parts are read from: the tests' names (the test
//! binaries' `--list` output), the committed transcripts, the classes'
//! gradebooks.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use lab_claims::{CLAIMS, Claim, LESSONS, Track};

use crate::book::find_files;

/// A submission of a class, and the claims it lost that the reference
/// passed.
pub type Lost = (String, Vec<String>);

/// A committed gradebook: its header, then a row per submission.
pub struct Gradebook {
    /// The columns: `submission`, the claims, the totals.
    pub header: Vec<String>,
    /// The rows, each in the header's order.
    pub rows: Vec<Vec<String>>,
}

/// What the generated parts are read from.
pub struct Lab {
    /// Every test's name, from the `--list` files.
    pub tests: BTreeSet<String>,
    /// Each chapter of the committed transcripts by its heading's first word
    /// (`L1` … `L7`, `PG`): its lines.
    pub stories: BTreeMap<String, Vec<String>>,
    /// The classes: folder name, then (submission, claims it lost against
    /// the reference).
    pub classes: Vec<(String, Vec<Lost>)>,
    /// Each class's gradebook, by folder name (`class`, `class-postgres`).
    pub gradebooks: BTreeMap<String, Gradebook>,
}

impl Lab {
    pub fn read(root: &Path, lists: &[PathBuf]) -> Result<Lab, String> {
        let mut tests = BTreeSet::new();
        for list in lists {
            let text = fs::read_to_string(list)
                .map_err(|error| format!("cannot read {}: {error}", list.display()))?;
            tests.extend(
                text.lines()
                    .filter_map(|line| line.strip_suffix(": test"))
                    .map(str::to_owned),
            );
        }
        if tests.is_empty() {
            return Err(
                "no tests listed: give the test binaries' --list output with --list \
                 (.ci/book does)"
                    .to_owned(),
            );
        }

        let mut snapshots = Vec::new();
        find_files(&root.join("tests/lab"), "snap", &mut snapshots)?;
        snapshots.sort();
        let mut stories: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for snapshot in snapshots {
            let text = fs::read_to_string(&snapshot)
                .map_err(|error| format!("cannot read {}: {error}", snapshot.display()))?;
            // insta's header is a YAML block between two `---` lines.
            let body = text.splitn(3, "---\n").nth(2).unwrap_or(&text);
            let mut current: Option<String> = None;
            for line in body.lines() {
                if !line.starts_with(' ') && !line.is_empty() {
                    let id = line.split(' ').next().unwrap_or(line).to_owned();
                    current = Some(id);
                }
                if let Some(id) = &current {
                    stories.entry(id.clone()).or_default().push(line.to_owned());
                }
            }
        }

        let mut classes = Vec::new();
        let mut gradebooks = BTreeMap::new();
        let mut folders: Vec<PathBuf> = fs::read_dir(root.join("staff"))
            .map_err(|error| format!("cannot read staff/: {error}"))?
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.join("gradebook.csv").is_file())
            .collect();
        folders.sort();
        for folder in folders {
            let name = folder
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let path = folder.join("gradebook.csv");
            let gradebook = Gradebook::read(&path)?;
            classes.push((name.clone(), losses(&gradebook, &path)?));
            gradebooks.insert(name, gradebook);
        }
        Ok(Lab {
            tests,
            stories,
            classes,
            gradebooks,
        })
    }

    /// The tests of `claim` on `track`, as functions (an rstest case's
    /// `::case_…` cut off), in list order.
    pub fn functions(&self, claim: &Claim, track: Track) -> Vec<String> {
        let prefix = claim.test_prefix();
        let mut seen = Vec::new();
        for test in &self.tests {
            if Track::of_test(test) != track {
                continue;
            }
            let function = test.split("::case_").next().unwrap_or(test);
            let name = function.rsplit("::").next().unwrap_or(function);
            if name.starts_with(&prefix) && !seen.iter().any(|known| known == function) {
                seen.push(function.to_owned());
            }
        }
        seen
    }

    fn count(&self, track: Track) -> usize {
        self.tests
            .iter()
            .filter(|test| {
                Track::of_test(test) == track && lab_claims::claim_of_test(test).is_some()
            })
            .count()
    }

    /// A number the text quotes, by its name.
    pub fn number(&self, name: &str) -> Result<String, String> {
        if let Some((kind, key)) = name.split_once('-') {
            if ["tests", "claims", "steps", "points"].contains(&kind) {
                let track = Track::ALL
                    .into_iter()
                    .find(|track| track.key() == key)
                    .ok_or_else(|| format!("no track {key:?}"))?;
                return Ok(self.on_track(kind, track));
            }
        }
        if let Some(rest) = name.strip_prefix("class-") {
            return self.in_class(name, rest);
        }
        match name {
            "tests" => Ok(self
                .tests
                .iter()
                .filter(|test| lab_claims::claim_of_test(test).is_some())
                .count()
                .to_string()),
            "claims" => Ok(CLAIMS.len().to_string()),
            // Not a number: the claims no server track runs, and why.
            "sqlite-only" => Ok(sqlite_only()),
            "lessons" => Ok(LESSONS.len().to_string()),
            "invariants" | "schedules" => self.explored(name),
            _ => Err(format!("no number called {name:?}")),
        }
    }

    /// `tests-`, `claims-`, `steps-` (GitHub Classroom's: one per claim
    /// worth points) or `points-` of a track.
    fn on_track(&self, kind: &str, track: Track) -> String {
        let claims = CLAIMS.iter().filter(|claim| claim.on(track));
        match kind {
            "tests" => self.count(track),
            "claims" => claims.count(),
            "steps" => claims.filter(|claim| claim.points > 0).count(),
            _ => lab_claims::total_points_on(track) as usize,
        }
        .to_string()
    }

    /// `class-FOLDER-KIND`: how many submissions of a kind (`mutants`,
    /// `alternatives`) a class has; FOLDER `sqlite` is `staff/class`.
    fn in_class(&self, name: &str, rest: &str) -> Result<String, String> {
        let (folder, kind) = rest
            .rsplit_once('-')
            .ok_or_else(|| format!("a class number is class-FOLDER-KIND, not {name:?}"))?;
        let folder = if folder == "sqlite" {
            "class".to_owned()
        } else {
            format!("class-{folder}")
        };
        let kind = kind.trim_end_matches('s');
        let (_, rows) = self
            .classes
            .iter()
            .find(|(name, _)| *name == folder)
            .ok_or_else(|| format!("no class staff/{folder}"))?;
        Ok(rows
            .iter()
            .filter(|(submission, _)| submission.starts_with(kind))
            .count()
            .to_string())
    }

    /// The explorer's `schedules` or `invariants`, read off L1's story:
    /// "[L1.3] explorer   apply: 380 schedules, every one kept the
    /// invariants (fenced, at most once, …)".
    fn explored(&self, name: &str) -> Result<String, String> {
        let line = self
            .stories
            .get("L1")
            .and_then(|lines| {
                lines
                    .iter()
                    .find(|line| line.contains("every one kept the invariants"))
            })
            .ok_or("the L1 transcript has no line with the explorer's invariants")?;
        if name == "schedules" {
            let (_, after) = line.split_once("apply: ").ok_or("no schedule count")?;
            Ok(after.split(' ').next().unwrap_or("").to_owned())
        } else {
            let (_, after) = line.split_once('(').ok_or("no list of invariants")?;
            let list = after.trim_end_matches(')');
            Ok(list.split(", ").count().to_string())
        }
    }
}

impl Gradebook {
    fn read(path: &Path) -> Result<Gradebook, String> {
        let text = fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let mut lines = text
            .lines()
            .map(|line| line.split(',').map(str::to_owned).collect());
        Ok(Gradebook {
            header: lines.next().unwrap_or_default(),
            rows: lines.collect(),
        })
    }
}

/// Each submission of a gradebook with the claims it lost that the
/// reference passed.
fn losses(gradebook: &Gradebook, path: &Path) -> Result<Vec<Lost>, String> {
    let is_reference = |row: &&Vec<String>| row.first().is_some_and(|name| name == "reference");
    let reference = gradebook
        .rows
        .iter()
        .find(is_reference)
        .ok_or_else(|| format!("{} has no row for the reference", path.display()))?;
    Ok(gradebook
        .rows
        .iter()
        .filter(|row| !is_reference(row))
        .map(|row| {
            let lost = gradebook
                .header
                .iter()
                .enumerate()
                .filter(|(at, column)| {
                    claim_column(column).is_some()
                        && reference.get(*at) != row.get(*at)
                        && reference.get(*at).is_some_and(|cell| cell != "0")
                })
                .map(|(_, column)| column.clone())
                .collect();
            (row.first().cloned().unwrap_or_default(), lost)
        })
        .collect())
}

/// A gradebook column's claim and track: `L4.2` is SQLite's, `postgres
/// `ONLY_ON_SQLITE` in words: `L1.3 (why), L3.4 (why) and L5.7 (why)`, a
/// run of claims with the same reason said once.
fn sqlite_only() -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for &(id, why) in lab_claims::ONLY_ON_SQLITE {
        match groups.iter_mut().find(|(_, said)| *said == why) {
            Some((ids, _)) => ids.push(id),
            None => groups.push((vec![id], why)),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(ids, why)| format!("{} ({why})", and_list(ids)))
        .collect();
    and_list(&parts)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list<T: AsRef<str>>(items: &[T]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", rest.join(", "), last.as_ref())
        }
    }
}

/// L4.2` PostgreSQL's; `None` for any other column (`total`).
pub fn claim_column(column: &str) -> Option<(&str, Option<Track>)> {
    let (track, id) = match column.split_once(' ') {
        Some((key, id)) => (
            Some(Track::ALL.into_iter().find(|track| track.key() == key)?),
            id,
        ),
        None => (None, column),
    };
    lab_claims::claim(id).map(|claim| (claim.id, track))
}
