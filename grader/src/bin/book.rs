//! `cargo book`: writes the parts of the book (`book/src/`) and the README
//! that are read off the lab itself, so that they cannot drift from it, and
//! draws the lesson's sequence diagram from the L1 transcript.
//!
//! A generated part sits between two HTML comments, invisible on a code
//! host and in mdBook alike:
//!
//! - a block: `<!-- generated: claims L4 -->` … `<!-- end generated -->`,
//!   where the kind is `claims` (the lesson's claims and their tests),
//!   `story` (the lesson's committed transcript), `pitfalls` (the committed
//!   mutants that lose a claim of the lesson) or `lessons` (every lesson,
//!   its claims and points, one line each);
//! - a number in running text: `<!-- n: tests-sqlite -->85<!-- /n -->`.
//!
//! Sources: the claim catalogue (`claims/`), the committed snapshots under
//! `tests/lab/`, the classes' gradebooks (`tests/class*/gradebook.csv`), and
//! the test binaries' `--list` output, given as files (`--list FILE`, once
//! per build: the SQLite tests, with `postgres`, with `etcd`).
//!
//! `cargo book --list … --check` writes nothing and exits 1 if a file would
//! change (CI runs it); without `--check` it rewrites the files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lab_claims::{CLAIMS, Claim, LESSONS, Track};

/// The files whose generated parts this writes, from the checkout's root.
const PAGES: &str = "book/src";
/// The diagram, drawn from L1.1's lines of the L1 transcript.
const DIAGRAM: &str = "book/src/sequence.svg";
/// The benchmark's committed chart, and its copy in the book.
const CHART: (&str, &str) = ("bench/results/throughput.svg", "book/src/throughput.svg");

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("book: {error}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool, String> {
    let mut lists = Vec::new();
    let mut check = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--list" => lists
                .push(PathBuf::from(args.next().ok_or(
                    "--list takes a file: a test binary's --list output",
                )?)),
            "-h" | "--help" => {
                println!(
                    "usage: cargo book --list FILE [--list FILE]... [--check]\n\n\
                     rewrites the generated parts of book/src/*.md and README.md,\n\
                     book/src/sequence.svg and book/src/throughput.svg; --check writes\n\
                     nothing and fails if one would change"
                );
                return Ok(true);
            }
            other => return Err(format!("unknown argument {other:?}; see --help")),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("the grader has no parent folder")?
        .to_path_buf();
    let lab = Lab::read(&root, &lists)?;

    let mut files: Vec<PathBuf> = vec![root.join("README.md")];
    let mut pages: Vec<PathBuf> = Vec::new();
    find_files(&root.join(PAGES), "md", &mut pages)?;
    pages.sort();
    files.extend(pages);

    let mut same = true;
    for file in &files {
        let old = fs::read_to_string(file)
            .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
        let new = fill(&old, &lab).map_err(|error| format!("{}: {error}", file.display()))?;
        same &= write_or_compare(&root, file, &old, &new, check)?;
    }
    let diagram = root.join(DIAGRAM);
    let old = fs::read_to_string(&diagram).unwrap_or_default();
    let new = sequence_svg(&lab.stories)?;
    same &= write_or_compare(&root, &diagram, &old, &new, check)?;
    // The benchmark's chart, as the benchmark last drew it.
    let chart = root.join(CHART.1);
    let old = fs::read_to_string(&chart).unwrap_or_default();
    let new = fs::read_to_string(root.join(CHART.0))
        .map_err(|error| format!("cannot read {}: {error}", CHART.0))?;
    same &= write_or_compare(&root, &chart, &old, &new, check)?;
    if check && same {
        println!(
            "the book's and the README's generated parts match the lab ({} files)",
            files.len() + 2
        );
    }
    Ok(same)
}

fn write_or_compare(
    root: &Path,
    file: &Path,
    old: &str,
    new: &str,
    check: bool,
) -> Result<bool, String> {
    if old == new {
        return Ok(true);
    }
    let shown = file.strip_prefix(root).unwrap_or(file).display();
    if check {
        let line = old
            .lines()
            .zip(new.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| old.lines().count().min(new.lines().count()));
        eprintln!(
            "{shown} differs from what `cargo book` writes, from line {}: run .ci/book and commit",
            line + 1
        );
        Ok(false)
    } else {
        fs::write(file, new).map_err(|error| format!("cannot write {shown}: {error}"))?;
        println!("wrote {shown}");
        Ok(true)
    }
}

/// Every file under `dir` whose name ends in `.extension`, at any depth.
fn find_files(dir: &Path, extension: &str, into: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        fs::read_dir(dir).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_files(&path, extension, into)?;
        } else if path.extension().is_some_and(|found| found == extension) {
            into.push(path);
        }
    }
    Ok(())
}

/// A submission of a class, and the claims it lost that the reference
/// passed.
type Lost = (String, Vec<String>);

/// What the generated parts are read from.
struct Lab {
    /// Every test's name, from the `--list` files.
    tests: BTreeSet<String>,
    /// Each chapter of the committed transcripts by its heading's first word
    /// (`L1` … `L7`, `PG`): its lines.
    stories: BTreeMap<String, Vec<String>>,
    /// The classes: folder name, then (submission, claims it lost against
    /// the reference).
    classes: Vec<(String, Vec<Lost>)>,
    /// The checkout's root, for the gradebooks a sample is read from.
    root: PathBuf,
}

impl Lab {
    fn read(root: &Path, lists: &[PathBuf]) -> Result<Lab, String> {
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
        let mut folders: Vec<PathBuf> = fs::read_dir(root.join("tests"))
            .map_err(|error| format!("cannot read tests/: {error}"))?
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
            classes.push((name, losses(&folder.join("gradebook.csv"))?));
        }
        Ok(Lab {
            tests,
            stories,
            classes,
            root: root.to_path_buf(),
        })
    }

    /// The tests of `claim` on `track`, as functions (an rstest case's
    /// `::case_…` cut off), in list order.
    fn functions(&self, claim: &Claim, track: Track) -> Vec<String> {
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
    fn number(&self, name: &str) -> Result<String, String> {
        let class = |folder: &str, kind: &str| -> Result<String, String> {
            let (_, rows) = self
                .classes
                .iter()
                .find(|(name, _)| name == folder)
                .ok_or_else(|| format!("no class tests/{folder}"))?;
            Ok(rows
                .iter()
                .filter(|(submission, _)| submission.starts_with(kind))
                .count()
                .to_string())
        };
        let track = |key: &str| Track::ALL.into_iter().find(|track| track.key() == key);
        if let Some(key) = name.strip_prefix("tests-") {
            let track = track(key).ok_or_else(|| format!("no track {key:?}"))?;
            return Ok(self.count(track).to_string());
        }
        if let Some(key) = name.strip_prefix("claims-") {
            let track = track(key).ok_or_else(|| format!("no track {key:?}"))?;
            return Ok(CLAIMS
                .iter()
                .filter(|claim| claim.on(track))
                .count()
                .to_string());
        }
        if let Some(key) = name.strip_prefix("steps-") {
            // GitHub Classroom's steps: one per claim worth points.
            let track = track(key).ok_or_else(|| format!("no track {key:?}"))?;
            return Ok(CLAIMS
                .iter()
                .filter(|claim| claim.on(track) && claim.points > 0)
                .count()
                .to_string());
        }
        if let Some(key) = name.strip_prefix("points-") {
            let track = track(key).ok_or_else(|| format!("no track {key:?}"))?;
            return Ok(lab_claims::total_points_on(track).to_string());
        }
        if let Some(rest) = name.strip_prefix("class-") {
            let (folder, kind) = rest
                .rsplit_once('-')
                .ok_or_else(|| format!("a class number is class-FOLDER-KIND, not {name:?}"))?;
            let folder = if folder == "sqlite" {
                "class".to_owned()
            } else {
                format!("class-{folder}")
            };
            let kind = kind.trim_end_matches('s');
            return class(&folder, kind);
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
            "invariants" | "schedules" => {
                // "[L1.3] explorer   apply: 380 schedules, every one kept the
                // invariants (fenced, at most once, …)"
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
            _ => Err(format!("no number called {name:?}")),
        }
    }
}

/// Each submission of a gradebook with the claims it lost that the
/// reference passed.
fn losses(gradebook: &Path) -> Result<Vec<Lost>, String> {
    let text = fs::read_to_string(gradebook)
        .map_err(|error| format!("cannot read {}: {error}", gradebook.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
    let reference = rows
        .iter()
        .find(|row| row.first() == Some(&"reference"))
        .ok_or_else(|| format!("{} has no row for the reference", gradebook.display()))?;
    Ok(rows
        .iter()
        .filter(|row| row.first() != Some(&"reference"))
        .map(|row| {
            let lost = header
                .iter()
                .enumerate()
                .filter(|(at, column)| {
                    claim_column(column).is_some()
                        && reference.get(*at) != row.get(*at)
                        && reference.get(*at).is_some_and(|cell| *cell != "0")
                })
                .map(|(_, column)| (*column).to_owned())
                .collect();
            (row.first().copied().unwrap_or_default().to_owned(), lost)
        })
        .collect())
}

/// A gradebook column's claim and track: `L4.2` is SQLite's, `postgres
/// L4.2` PostgreSQL's; `None` for any other column (`total`).
fn claim_column(column: &str) -> Option<(&str, Option<Track>)> {
    let (track, id) = match column.split_once(' ') {
        Some((key, id)) => (
            Some(Track::ALL.into_iter().find(|track| track.key() == key)?),
            id,
        ),
        None => (None, column),
    };
    lab_claims::claim(id).map(|claim| (claim.id, track))
}

/// The text with every generated part written anew.
fn fill(text: &str, lab: &Lab) -> Result<String, String> {
    let mut out = String::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if let Some(what) = line
            .trim()
            .strip_prefix("<!-- generated: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            out.push_str(line);
            out.push_str(&block(what, lab)?);
            let mut ended = false;
            for skipped in lines.by_ref() {
                if skipped.trim() == "<!-- end generated -->" {
                    out.push_str(skipped);
                    ended = true;
                    break;
                }
            }
            if !ended {
                return Err(format!(
                    "<!-- generated: {what} --> has no <!-- end generated -->"
                ));
            }
        } else if let Some(what) = line
            .trim()
            .strip_prefix("<!-- sample: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            out.push_str(line);
            out.push_str(&sample(what, &mut lines, lab)?);
        } else {
            out.push_str(&numbers(line, lab)?);
        }
    }
    Ok(out)
}

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

/// The fenced block after `<!-- sample: CLASS SUBMISSION -->`, a screen
/// of the grader's shown in the book, with its numbers read off the
/// submission's row in `tests/CLASS/gradebook.csv`: the `Points X/Y` line,
/// and the watch mode's header and its bar per lesson (as `cargo grade
/// --watch` draws them; `.ci/watch-in-tmux` holds the book's bars to the
/// real screen). Every other line of the block is the text's own.
fn sample<'a>(
    what: &str,
    lines: &mut impl Iterator<Item = &'a str>,
    lab: &Lab,
) -> Result<String, String> {
    let (class, submission) = what
        .split_once(' ')
        .ok_or_else(|| format!("a sample is <!-- sample: CLASS SUBMISSION -->, not {what:?}"))?;
    let earned = gradebook_row(&lab.root.join("tests").join(class), submission)?;
    let points = |id: &str| earned.get(id).copied().unwrap_or(0);
    let total: u32 = lab_claims::total_points_on(Track::Sqlite);
    let got: u32 = CLAIMS
        .iter()
        .filter(|claim| claim.on(Track::Sqlite))
        .map(|claim| points(claim.id))
        .sum();
    let mut out = String::new();
    let fence = lines
        .next()
        .filter(|line| line.starts_with("```"))
        .ok_or_else(|| format!("<!-- sample: {what} --> is not followed by a fenced block"))?;
    out.push_str(fence);
    let mut bars_written = false;
    for line in lines.by_ref() {
        if line.starts_with("```") {
            out.push_str(line);
            return Ok(out);
        }
        if line.starts_with("Points ") {
            let _ = writeln!(out, "Points {got}/{total}");
        } else if let Some((head, _)) = line.split_once("    points ") {
            let _ = writeln!(out, "{head}    points {got}/{total}");
        } else if is_bar(line) {
            if !bars_written {
                out.push_str(&bars(&points));
                bars_written = true;
            }
        } else {
            out.push_str(line);
        }
    }
    Err(format!(
        "the fenced block after <!-- sample: {what} --> does not close"
    ))
}

/// Whether `line` is a lesson's bar of the watch screen (`  L2   ####…`).
fn is_bar(line: &str) -> bool {
    line.strip_prefix("  L").is_some_and(|rest| {
        rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains(" points, ")
    })
}

/// The width of a lesson's bar on the watch screen.
const BAR: usize = 20;

/// The watch screen's bars for the SQLite track, from each claim's points.
fn bars(points: &dyn Fn(&str) -> u32) -> String {
    let mut out = String::new();
    for lesson in lab_claims::LESSONS {
        let claims: Vec<&Claim> = CLAIMS
            .iter()
            .filter(|claim| claim.on(Track::Sqlite) && claim.lesson().id == lesson.id)
            .collect();
        if claims.is_empty() {
            continue;
        }
        let total: u32 = claims.iter().map(|claim| claim.points).sum();
        let earned: u32 = claims.iter().map(|claim| points(claim.id)).sum();
        // A claim worth no points passes when the gradebook cannot say: the
        // sample's submissions pass it (L3.6, the load test).
        let passing = claims
            .iter()
            .filter(|claim| claim.points == 0 || points(claim.id) == claim.points)
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

/// The SQLite columns of `submission`'s row in the gradebook of `class`.
fn gradebook_row(class: &Path, submission: &str) -> Result<BTreeMap<String, u32>, String> {
    let path = class.join("gradebook.csv");
    let text = fs::read_to_string(&path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let row: Vec<&str> = lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|row| row.first() == Some(&submission))
        .ok_or_else(|| format!("{} has no row {submission:?}", path.display()))?;
    Ok(header
        .iter()
        .zip(row)
        .filter(|(column, _)| matches!(claim_column(column), Some((_, None))))
        .map(|(column, cell)| ((*column).to_owned(), cell.parse().unwrap_or(0)))
        .collect())
}

/// A line with each `<!-- n: NAME -->…<!-- /n -->` holding its number.
fn numbers(line: &str, lab: &Lab) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("<!-- n: ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "<!-- n: ".len()..];
        let (name, after) = after
            .split_once(" -->")
            .ok_or("a <!-- n: …  --> that does not close")?;
        let (_, after) = after
            .split_once("<!-- /n -->")
            .ok_or_else(|| format!("<!-- n: {name} --> has no <!-- /n -->"))?;
        let _ = write!(out, "<!-- n: {name} -->{}<!-- /n -->", lab.number(name)?);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// The text of one generated block.
fn block(what: &str, lab: &Lab) -> Result<String, String> {
    let (kind, lesson) = what.split_once(' ').unwrap_or((what, ""));
    let mut out = String::from("\n");
    match kind {
        "claims" => {
            out.push_str("| Claim | Points | What the lab shows | Tests (`tests/lab/`) |\n");
            out.push_str("| --- | --- | --- | --- |\n");
            for claim in CLAIMS.iter().filter(|claim| claim.lesson().id == lesson) {
                let mut tests = Vec::new();
                for track in Track::ALL {
                    let functions = lab.functions(claim, track);
                    if functions.is_empty() {
                        continue;
                    }
                    let shown: Vec<String> =
                        functions.iter().map(|name| format!("`{name}`")).collect();
                    tests.push(match track {
                        Track::Sqlite => shown.join(", "),
                        _ => format!("on {}: {}", track.name(), shown.join(", ")),
                    });
                }
                let only = match claim.tracks {
                    [Track::Postgres] => " *PostgreSQL*",
                    [Track::Etcd] => " *etcd*",
                    [Track::PostgresSql] => " *PostgreSQL functions*",
                    _ => "",
                };
                let _ = writeln!(
                    out,
                    "| {}{only} | {} | {} | {} |",
                    claim.id,
                    claim.points,
                    claim.text.replace('|', "\\|"),
                    tests.join("; ")
                );
            }
        }
        "story" => {
            let lines = lab
                .stories
                .get(lesson)
                .ok_or_else(|| format!("no committed transcript starts with {lesson}"))?;
            out.push_str("```text\n");
            for line in lines {
                out.push_str(line);
                out.push('\n');
            }
            out.push_str("```\n");
        }
        "pitfalls" => {
            let ids: Vec<&str> = CLAIMS
                .iter()
                .filter(|claim| claim.lesson().id == lesson)
                .map(|claim| claim.id)
                .collect();
            let mut any = false;
            for (class, rows) in &lab.classes {
                for (submission, lost) in rows {
                    if !submission.starts_with("mutant") {
                        continue;
                    }
                    let here: Vec<String> = lost
                        .iter()
                        .filter_map(|column| claim_column(column))
                        .filter(|(id, _)| ids.contains(id))
                        .map(|(id, track)| match track {
                            // A claim checked on one track only needs no name.
                            Some(track)
                                if !lab_claims::claim(id)
                                    .is_some_and(|claim| claim.tracks == [track]) =>
                            {
                                format!("{id} on {}", track.name())
                            }
                            _ => id.to_owned(),
                        })
                        .collect();
                    if here.is_empty() {
                        continue;
                    }
                    any = true;
                    let _ = writeln!(
                        out,
                        "- `{submission}` (`tests/{class}/`): loses {}",
                        here.join(", ")
                    );
                }
            }
            if !any {
                out.push_str("- no committed mutant loses a claim of this lesson\n");
            }
        }
        "lessons" => {
            // Per track, as each track's scorecard counts them: a claim
            // checked on two tracks is one line on each scorecard.
            let plural = |count: usize, what: &str| {
                format!("{count} {what}{}", if count == 1 { "" } else { "s" })
            };
            for lesson in LESSONS {
                let mut counts: Vec<String> = Vec::new();
                for track in Track::ALL {
                    let claims: Vec<&Claim> = CLAIMS
                        .iter()
                        .filter(|claim| claim.lesson().id == lesson.id && claim.on(track))
                        .collect();
                    if claims.is_empty() {
                        continue;
                    }
                    let points: u32 = claims.iter().map(|claim| claim.points).sum();
                    let ungraded: Vec<&str> = claims
                        .iter()
                        .filter(|claim| claim.points == 0)
                        .map(|claim| claim.id)
                        .collect();
                    let ungraded = if ungraded.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} not graded)", ungraded.join(", "))
                    };
                    counts.push(format!(
                        "{} {}, {}{ungraded}",
                        track.name(),
                        plural(claims.len(), "claim"),
                        plural(points as usize, "point")
                    ));
                }
                let _ = writeln!(
                    out,
                    "- **{} {}**: {}",
                    lesson.id,
                    lesson.title,
                    counts.join("; ")
                );
            }
        }
        _ => return Err(format!("no generated block of kind {kind:?}")),
    }
    out.push('\n');
    Ok(out)
}

/// The lesson as a picture: L1.1's lines of the L1 transcript as a
/// sequence diagram, one lane per actor, the destination on the right; a
/// call is an arrow to the destination and its answer an arrow back, a
/// refusal in red, a pause a gap on the worker's lane.
fn sequence_svg(stories: &BTreeMap<String, Vec<String>>) -> Result<String, String> {
    let lines = stories
        .get("L1")
        .ok_or("no committed L1 transcript to draw")?;
    let steps: Vec<(String, String)> = lines
        .iter()
        .filter_map(|line| line.trim_start().strip_prefix("[L1.1] "))
        .map(|rest| {
            let (actor, text) = rest.split_at(rest.len().min(10));
            (actor.trim().to_owned(), text.trim().to_owned())
        })
        .filter(|(actor, _)| !actor.is_empty())
        .collect();
    if steps.is_empty() {
        return Err("the L1 transcript has no [L1.1] lines to draw".to_owned());
    }
    let mut lanes: Vec<String> = Vec::new();
    for (actor, _) in &steps {
        if actor != "observer" && !lanes.contains(actor) {
            lanes.push(actor.clone());
        }
    }
    lanes.push("destination (SQLite)".to_owned());
    let (width, lane_gap, top) = (800, 250, 70);
    let x = |lane: usize| 110 + lane * lane_gap;
    let destination = lanes.len() - 1;
    let mut body = String::new();
    let mut y = top + 40;
    // Lanes paused now, with the height their gap starts at.
    let mut paused: Vec<(usize, usize)> = Vec::new();
    for (actor, text) in &steps {
        if actor == "observer" {
            let _ = writeln!(
                body,
                r##"<rect x="{}" y="{}" width="300" height="34" fill="#f4f1de" stroke="#999"/><text x="{}" y="{}" class="note">an observer reads it:</text><text x="{}" y="{}" class="note">{}</text>"##,
                x(destination) - 150,
                y - 12,
                x(destination) - 142,
                y + 2,
                x(destination) - 142,
                y + 16,
                escape(text)
            );
            y += 60;
            continue;
        }
        let lane = lanes.iter().position(|name| name == actor).unwrap_or(0);
        // A paused lane's gap ends where its actor acts again.
        if let Some(at) = paused
            .iter()
            .position(|(paused_lane, _)| *paused_lane == lane)
        {
            let (_, since) = paused.remove(at);
            let _ = writeln!(
                body,
                r##"<rect x="{}" y="{since}" width="12" height="{}" fill="#fff" stroke="#c00" stroke-dasharray="4 3"/>"##,
                x(lane) - 6,
                y - 18 - since
            );
        }
        let (call, answer) = match text.split_once(" -> ") {
            Some((call, answer)) => (call.to_owned(), Some(answer.to_owned())),
            None => (text.clone(), None),
        };
        let (call, pauses) = match call.split_once(", then pauses") {
            Some((call, _)) => (call.to_owned(), true),
            None => (call, false),
        };
        let (from, to) = (x(lane), x(destination));
        let _ = writeln!(
            body,
            r##"<line x1="{from}" y1="{y}" x2="{}" y2="{y}" class="call" marker-end="url(#arrow)"/><text x="{}" y="{}" class="label">{}</text>"##,
            to - 6,
            from + 8,
            y - 6,
            escape(&call)
        );
        y += 28;
        if let Some(answer) = answer {
            let refused = answer.starts_with("rejected");
            let _ = writeln!(
                body,
                r##"<line x1="{to}" y1="{y}" x2="{}" y2="{y}" class="{}" marker-end="url(#{})"/><text x="{}" y="{}" class="label{}">{}</text>"##,
                from + 6,
                if refused { "refused" } else { "answer" },
                if refused { "red" } else { "arrow" },
                from + 8,
                y - 6,
                if refused { " bad" } else { "" },
                escape(&answer)
            );
            y += 28;
        }
        if pauses {
            let _ = writeln!(
                body,
                r##"<text x="{}" y="{}" class="label bad">paused, holding what it read</text>"##,
                from + 12,
                y + 6
            );
            paused.push((lane, y - 10));
            y += 24;
        }
    }
    let height = y + 20;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">"##
    );
    svg.push_str(
        "<!-- Drawn by `cargo book` from the [L1.1] lines of the committed L1 transcript \
         (tests/lab/snapshots/), which CI holds against a real run of the reference. -->\n",
    );
    svg.push_str(concat!(
        "<style>.call,.answer{stroke:#333;stroke-width:1.5}.answer{stroke-dasharray:5 3}",
        ".refused{stroke:#c00;stroke-width:2;stroke-dasharray:5 3}.label{fill:#222}",
        ".bad{fill:#c00;font-weight:bold}.note{fill:#333;font-size:12px}",
        ".lane{stroke:#bbb;stroke-width:1}.head{font-weight:bold}</style>\n",
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" ",
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#333\"/></marker>",
        "<marker id=\"red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" ",
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c00\"/></marker></defs>\n",
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    ));
    for (lane, name) in lanes.iter().enumerate() {
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="middle" class="head">{}</text><line x1="{}" y1="{}" x2="{}" y2="{}" class="lane"/>"##,
            x(lane),
            top - 30,
            escape(name),
            x(lane),
            top - 20,
            x(lane),
            height - 10
        );
    }
    svg.push_str(&body);
    svg.push_str("</svg>\n");
    Ok(svg)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
