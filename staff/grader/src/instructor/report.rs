//! What batch grading writes: `gradebook.csv`, one `results.json` per
//! submission (the field names of Exercism's test-runner interface,
//! version 3), the terminal summary, and the `--expect` comparison.
//!
//! The gradebook holds points only, no timings, so two runs over the same
//! class give the same bytes and CI can compare them with a committed file.
//!
//! With the PostgreSQL track graded (the feature `postgres`), its columns
//! follow SQLite's (`postgres L1.1`, …, `postgres total`), its claims follow
//! SQLite's in `results.json` with names that start `PostgreSQL: `, and the
//! summary has a points column per track. Without it, nothing changes. The
//! etcd track (the feature `etcd`) comes after them the same way
//! (`etcd L7.1`, …, `etcd total`; `etcd: `).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use lab_claims::{CLAIMS, LESSONS, Track};
use serde_json::{Map, Value, json};

use crate::engine::libtest::cut_at_boundary;
use crate::engine::review::Flag;
use crate::engine::score::{ClaimScore, Score, Status, Tracks};

/// How long an expected gradebook may be; a class is a few kilobytes.
const MAX_EXPECTED: u64 = 16 << 20;

/// The characters of a test's output that Exercism's interface shows.
const OUTPUT_CHARS: usize = 500;

/// What the result column adds for a submission whose files are links into
/// classmates' folders: `pass; files are links to correct's`.
pub const LINKED: &str = "; files are links to ";

/// One graded submission.
#[derive(Debug)]
pub struct Graded {
    /// The folder's name.
    pub name: String,
    /// Per track, per claim.
    pub score: Score,
    /// Why the submission could not be graded in full: a compile error, a
    /// timeout, an early exit, a refused file.
    pub error: Option<String>,
    /// The result column of the summary: "pass", "fail: L2.2", "timed out".
    pub short: String,
    /// Facts worth a look that are not errors: ignored files, floods.
    pub notes: Vec<String>,
    /// What its source names outside the allowlist (`engine::review`):
    /// with any, it is on hold unless accepted.
    pub flags: Vec<Flag>,
    /// An instructor accepted it as it is (`--accept NAME`): its points
    /// count despite its flags.
    pub accepted: bool,
    /// The tracks it handed in at least one exercise file for; the others
    /// were graded as the untouched stubs.
    pub submitted: Vec<Track>,
    /// Wall-clock time, build and run.
    pub elapsed: Duration,
}

impl Graded {
    /// On hold: its source names something outside the allowlist and no
    /// instructor has accepted it, so its points stay out of the total.
    pub fn held(&self) -> bool {
        !self.flags.is_empty() && !self.accepted
    }

    /// `pass`, `fail` or `error`, as Exercism spells a run's status (a
    /// submission on hold is an `error`: its result is not final).
    pub fn status(&self) -> &'static str {
        if self.error.is_some() || self.held() {
            "error"
        } else if self.score.full_marks() {
            "pass"
        } else {
            "fail"
        }
    }
}

/// What the gradebook, the class report and the class rules need of one
/// graded submission; all a merge of shards reads back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The folder's name.
    pub name: String,
    /// `pass`, `fail` or `error`, as in its `results.json`.
    pub status: String,
    /// The result column of the summary.
    pub short: String,
    /// How many lines the review held.
    pub flags: usize,
    /// On hold: its points are not in the total.
    pub held: bool,
    /// The tracks it brought files for, by key.
    pub submitted: Vec<String>,
    /// Per graded track, per claim.
    pub tracks: Vec<TrackRow>,
}

/// One track of a [`Row`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackRow {
    /// The track's key (`sqlite`, `postgres`, `etcd`).
    pub track: String,
    /// Per claim: its id, `pass`, `fail` or `error`, and the points earned.
    pub claims: Vec<(String, String, u32)>,
}

impl TrackRow {
    /// The points earned on the track.
    pub fn earned(&self) -> u32 {
        self.claims.iter().map(|(_, _, earned)| earned).sum()
    }

    /// The claims that did not pass, among those worth points.
    pub fn lost(&self) -> Vec<&str> {
        self.claims
            .iter()
            .filter(|(id, status, _)| {
                status != "pass" && lab_claims::claim(id).is_some_and(|c| c.points > 0)
            })
            .map(|(id, _, _)| id.as_str())
            .collect()
    }
}

impl Row {
    /// The row of a submission graded just now.
    pub fn of(graded: &Graded) -> Row {
        Row {
            name: graded.name.clone(),
            status: graded.status().to_owned(),
            short: graded.short.clone(),
            flags: graded.flags.len(),
            held: graded.held(),
            submitted: graded
                .submitted
                .iter()
                .map(|track| track.key().to_owned())
                .collect(),
            tracks: graded
                .score
                .tracks
                .iter()
                .map(|track| TrackRow {
                    track: track.track.key().to_owned(),
                    claims: track
                        .claims
                        .iter()
                        .map(|claim| {
                            let status = match claim.status {
                                Status::Pass => "pass",
                                Status::Fail => "fail",
                                Status::NoResult => "error",
                            };
                            (claim.claim.id.to_owned(), status.to_owned(), claim.earned)
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// As JSON, for `class.json`.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "status": self.status,
            "short": self.short,
            "flags": self.flags,
            "held": self.held,
            "submitted": self.submitted,
            "tracks": self.tracks.iter().map(|track| json!({
                "track": track.track,
                "claims": track.claims.iter().map(|(id, status, earned)| {
                    json!([id, status, earned])
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// Read back from `class.json`.
    pub fn from_json(value: &Value) -> Option<Row> {
        let text = |key: &str| value[key].as_str().map(str::to_owned);
        let tracks = value["tracks"]
            .as_array()?
            .iter()
            .map(|track| {
                let claims = track["claims"]
                    .as_array()?
                    .iter()
                    .map(|claim| {
                        Some((
                            claim[0].as_str()?.to_owned(),
                            claim[1].as_str()?.to_owned(),
                            u32::try_from(claim[2].as_u64()?).ok()?,
                        ))
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(TrackRow {
                    track: track["track"].as_str()?.to_owned(),
                    claims,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Row {
            name: text("name")?,
            status: text("status")?,
            short: text("short")?,
            flags: usize::try_from(value["flags"].as_u64()?).ok()?,
            held: value["held"].as_bool().unwrap_or(false),
            submitted: value["submitted"]
                .as_array()?
                .iter()
                .map(|key| key.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?,
            tracks,
        })
    }
}

/// The gradebook: a row per submission; per graded track a column per claim
/// with the points earned, and the total. SQLite's columns are the claim ids
/// and `total`; another track's start with its key (`postgres L1.1`).
pub fn gradebook(rows: &[Row], tracks: Tracks) -> Result<Vec<u8>, String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .write_record(gradebook_header(tracks))
        .map_err(csv_error)?;
    for submission in rows {
        let mut row = vec![spreadsheet_safe(&submission.name)];
        for track in &submission.tracks {
            row.extend(track.claims.iter().map(|(_, _, earned)| earned.to_string()));
            // On hold, the claims show what ran; the total waits for an
            // instructor's word.
            row.push(if submission.held {
                ON_HOLD.to_owned()
            } else {
                track.earned().to_string()
            });
        }
        writer.write_record(&row).map_err(csv_error)?;
    }
    writer
        .into_inner()
        .map_err(|error| format!("cannot write the gradebook: {error}"))
}

/// The gradebook's header: `submission`, then per graded track its claims'
/// columns and its total (see [`gradebook_column`]).
pub fn gradebook_header(tracks: Tracks) -> Vec<String> {
    let mut header = vec!["submission".to_owned()];
    for &track in tracks.list() {
        header.extend(
            CLAIMS
                .iter()
                .filter(|claim| claim.on(track))
                .map(|claim| gradebook_column(track, claim.id)),
        );
        header.push(gradebook_column(track, "total"));
    }
    header
}

/// A track's column in the gradebook: the claim id (or `total`) on SQLite,
/// after the track's key on another (`postgres L1.1`).
pub fn gradebook_column(track: Track, name: &str) -> String {
    match track {
        Track::Sqlite => name.to_owned(),
        _ => format!("{} {name}", track.key()),
    }
}

/// The class's own rules, said on stderr when broken: a mutant is a known
/// mistake, so one that loses nothing is a suite defect; an alternative is a
/// correct solution written differently, so one that loses a claim is a
/// suite defect too. Only the tracks a submission brought files for count:
/// a SQLite mutant loses the PostgreSQL track to its stubs, which says
/// nothing of the suite.
pub fn rules_hold(rows: &[Row]) -> bool {
    let submitted = |row: &'_ Row| -> Vec<TrackRow> {
        row.tracks
            .iter()
            .filter(|track| row.submitted.contains(&track.track))
            .cloned()
            .collect()
    };
    let perfect_mutants: Vec<&str> = rows
        .iter()
        .filter(|row| row.name.starts_with("mutant-") && !row.submitted.is_empty())
        .filter(|row| submitted(row).iter().all(|track| track.lost().is_empty()))
        .map(|row| row.name.as_str())
        .collect();
    let failing_alternatives: Vec<String> = rows
        .iter()
        .filter(|row| row.name.starts_with("alternative-"))
        .filter_map(|row| {
            let lost: Vec<String> = submitted(row)
                .iter()
                .flat_map(|track| {
                    let prefix = if track.track == Track::Sqlite.key() {
                        String::new()
                    } else {
                        format!("{} ", track.track)
                    };
                    track
                        .lost()
                        .into_iter()
                        .map(move |id| format!("{prefix}{id}"))
                        .collect::<Vec<_>>()
                })
                .collect();
            let empty = row.submitted.is_empty();
            match (empty, lost.is_empty()) {
                (true, _) => Some(format!("{} (brings no exercise file)", row.name)),
                (false, false) => Some(format!("{} (lost {})", row.name, lost.join(" "))),
                (false, true) => None,
            }
        })
        .collect();
    let held_alternatives: Vec<&str> = rows
        .iter()
        .filter(|row| row.held && (row.name.starts_with("alternative-") || row.name == "reference"))
        .map(|row| row.name.as_str())
        .collect();
    if !held_alternatives.is_empty() {
        eprintln!(
            "grade: these correct submissions are on hold, so the allowlist holds honest code: {}",
            held_alternatives.join(", ")
        );
    }
    if !perfect_mutants.is_empty() {
        eprintln!(
            "grade: these mutants scored full marks, so the suite misses their mistake: {}",
            perfect_mutants.join(", ")
        );
    }
    if !failing_alternatives.is_empty() {
        eprintln!(
            "grade: these alternatives are correct but lost claims, so the suite rejects a \
             right answer: {}",
            failing_alternatives.join("; ")
        );
    }
    perfect_mutants.is_empty() && failing_alternatives.is_empty() && held_alternatives.is_empty()
}

/// The gradebook's total for a submission on hold.
pub const ON_HOLD: &str = "on hold";

/// A cell a spreadsheet would take for a formula (`=`, `+`, `-`, `@`, a tab
/// or a carriage return first) gets a leading apostrophe, which shows it as
/// the text it is.
pub fn spreadsheet_safe(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    }
}

fn csv_error(error: csv::Error) -> String {
    format!("cannot write the gradebook: {error}")
}

/// The result column of a run that finished: "pass", or "fail: L2.2 L2.6;
/// postgres L3.2", per track short of full marks.
pub fn short_result(score: &Score) -> String {
    if score.full_marks() {
        return "pass".to_owned();
    }
    let parts: Vec<String> = score
        .tracks
        .iter()
        .filter(|track| !track.full_marks())
        .map(|track| {
            let failing = track.not_passing();
            let shown: Vec<&str> = failing.iter().copied().take(6).collect();
            let more = if failing.len() > shown.len() {
                " …"
            } else {
                ""
            };
            let key = match track.track {
                Track::Sqlite => String::new(),
                _ => format!("{} ", track.track.key()),
            };
            format!("{key}{}{more}", shown.join(" "))
        })
        .collect();
    format!("fail: {}", parts.join("; "))
}

/// A submission's `results.json`, in Exercism's field names: one test entry
/// per claim and track, its `task_id` the lesson's number. SQLite's entries
/// come first; a PostgreSQL entry's name starts with `PostgreSQL: `.
pub fn results_json(graded: &Graded) -> Value {
    let tests: Vec<Value> = graded
        .score
        .tracks
        .iter()
        .flat_map(|track| {
            track
                .claims
                .iter()
                .map(|claim| claim_json(track.track, claim, graded.error.as_deref()))
        })
        .collect();
    let mut result = Map::new();
    result.insert("version".into(), json!(3));
    result.insert("status".into(), json!(graded.status()));
    // Exercism v3: the top-level message belongs to an `error` status only.
    // Notes and the lines the review held go to a key of their own, which runners ignore.
    let message = top_message(graded);
    if graded.error.is_some() {
        result.insert("message".into(), json!(message));
    } else if !message.is_empty() {
        result.insert("notes".into(), json!(message));
    }
    result.insert("tests".into(), Value::Array(tests));
    // The same facts apart, for the report's page of the submission (a key
    // of our own, which Exercism's runners ignore).
    result.insert(
        "grader".into(),
        json!({
            "error": graded.error,
            "notes": graded.notes,
            "flags": graded.flags.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "accepted": graded.accepted,
        }),
    );
    Value::Object(result)
}

fn claim_json(track: Track, score: &ClaimScore, error: Option<&str>) -> Value {
    let claim = score.claim;
    let lesson = claim.lesson();
    let task = LESSONS
        .iter()
        .position(|known| known.id == lesson.id)
        .map_or(0, |index| index + 1);
    let prefix = match track {
        Track::Sqlite => String::new(),
        _ => format!("{}: ", track.name()),
    };
    let mut test = Map::new();
    test.insert(
        "name".into(),
        json!(format!("{prefix}{} {}", claim.id, claim.text)),
    );
    let (status, message) = match score.status {
        Status::Pass => ("pass", None),
        Status::Fail => {
            let mut message = format!("failed: {}", score.failed.join(", "));
            if let Some((_, failure)) = &score.first_failure {
                if !failure.message.is_empty() {
                    message.push_str("\n\n");
                    message.push_str(&failure.message);
                }
            }
            ("fail", Some(message))
        }
        Status::NoResult if score.missing.is_empty() => (
            "error",
            Some(match (score.never_ran, error) {
                (Some(why), _) => {
                    format!("no result: {}, see the submission's message", why.what())
                }
                (None, Some(_)) => "not run: see the submission's message".to_owned(),
                (None, None) => "no result: the suite has no test for this claim".to_owned(),
            }),
        ),
        Status::NoResult => (
            "error",
            Some(format!(
                "no result: {} of its tests never reported ({}); a claim without a result is not a pass",
                score.missing.len(),
                score.missing.join(", ")
            )),
        ),
    };
    test.insert("status".into(), json!(status));
    if let Some(message) = message {
        test.insert("message".into(), json!(message));
    }
    if let Some((_, failure)) = &score.first_failure {
        if !failure.output.is_empty() {
            test.insert("output".into(), json!(cut_output(&failure.output)));
        }
        if !failure.facts.is_empty() {
            test.insert("facts".into(), json!(failure.facts));
        }
        if !failure.reference.is_empty() {
            test.insert("reference_facts".into(), json!(failure.reference));
        }
    }
    test.insert("task_id".into(), json!(task));
    Value::Object(test)
}

/// The run's error, the notes and the lines the review held, as one message.
fn top_message(graded: &Graded) -> String {
    let mut parts = Vec::new();
    if let Some(error) = &graded.error {
        parts.push(error.clone());
    }
    parts.extend(graded.notes.iter().cloned());
    if !graded.flags.is_empty() {
        let mut text = String::from(if graded.accepted {
            "accepted by the instructor (--accept), though its source names what the allowlist \
             (staff/grader/allowlist.txt) does not have:"
        } else {
            "ON HOLD: its source names what the allowlist (staff/grader/allowlist.txt) does not have, \
             so its points are not in the total until an instructor reads these lines and \
             accepts it (--accept NAME):"
        });
        for flag in &graded.flags {
            let _ = write!(text, "\n  {flag}");
        }
        parts.push(text);
    }
    parts.join("\n\n")
}

/// At most [`OUTPUT_CHARS`] characters, saying so when cut.
fn cut_output(output: &str) -> String {
    if output.chars().count() <= OUTPUT_CHARS {
        return output.to_owned();
    }
    const MARK: &str = "\n[output cut to 500 characters]";
    let keep = OUTPUT_CHARS - MARK.chars().count();
    let mut cut: String = output.chars().take(keep).collect();
    cut.push_str(MARK);
    cut
}

/// The terminal summary: one line per submission, with a points column per
/// graded track (`points` alone when SQLite is the only one).
pub fn summary_table(graded: &[Graded], tracks: Tracks) -> String {
    let mut header = vec!["submission".to_owned()];
    let mut right = vec![false];
    for &track in tracks.list() {
        header.push(match tracks.list().len() {
            1 => "points".to_owned(),
            _ => track.name().to_owned(),
        });
        right.push(true);
    }
    header.extend(["result", "flags", "time"].map(String::from));
    right.extend([false, true, true]);
    let rows: Vec<Vec<String>> = graded
        .iter()
        .map(|submission| {
            let mut row = vec![submission.name.clone()];
            row.extend(
                submission
                    .score
                    .tracks
                    .iter()
                    .map(|track| format!("{}/{}", track.earned(), track.total())),
            );
            row.push(submission.short.clone());
            row.push(match submission.flags.len() {
                0 => "0".to_owned(),
                held if submission.held() => format!("{held} held"),
                held => format!("{held} accepted"),
            });
            row.push(format!("{:.1} s", submission.elapsed.as_secs_f64()));
            row
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut table = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .zip(&right)
            .map(|((cell, &width), &right)| {
                if right {
                    format!("{cell:>width$}")
                } else {
                    format!("{cell:<width$}")
                }
            })
            .collect();
        let _ = writeln!(table, "{}", cells.join("  "));
    }
    table
}

/// The submissions on hold and the lines they were held for, for the terminal: a few lines per
/// submission, all of them in its `results.json`.
pub fn flags_listing(graded: &[Graded]) -> String {
    const SHOWN: usize = 5;
    let mut listing = String::new();
    for submission in graded.iter().filter(|s| s.held()) {
        if listing.is_empty() {
            listing.push_str(
                "on hold (names outside staff/grader/allowlist.txt; points not in the total until \
                 accepted with --accept NAME):\n",
            );
        }
        for flag in submission.flags.iter().take(SHOWN) {
            let _ = writeln!(listing, "  {}: {flag}", submission.name);
        }
        if submission.flags.len() > SHOWN {
            let _ = writeln!(
                listing,
                "  {}: and {} more in its results.json",
                submission.name,
                submission.flags.len() - SHOWN
            );
        }
    }
    listing
}

/// The exit status of a class graded or merged: a failure when one of the
/// class's rules breaks ([`rules_hold`]) or when the gradebook differs from
/// `expect`'s ([`compare_with_expected`]), each said as it is found.
pub fn exit_status(rows: &[Row], gradebook: &[u8], expect: Option<&Path>) -> ExitCode {
    let mut failed = !rules_hold(rows);
    if let Some(expected) = expect {
        match compare_with_expected(gradebook, expected) {
            Ok(()) => println!("the gradebook matches {}", expected.display()),
            Err(difference) => {
                eprintln!("grade: {difference}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Compares the gradebook with the expected file, byte for byte. On a
/// difference, says which submissions and claims differ.
pub fn compare_with_expected(actual: &[u8], path: &Path) -> Result<(), String> {
    let expected = read_capped(path)?;
    if expected == actual {
        return Ok(());
    }
    let shown = path.display();
    let (Some(want), Some(got)) = (parse_csv(&expected), parse_csv(actual)) else {
        return Err(format!(
            "the gradebook differs from {shown}, which is not CSV: {}",
            first_difference(&expected, actual)
        ));
    };
    let lines = if want.first() != got.first() {
        // A claim added to or removed from the catalogue shows up here.
        vec![columns_differ(
            want.first().map(Vec::as_slice).unwrap_or_default(),
            got.first().map(Vec::as_slice).unwrap_or_default(),
        )]
    } else {
        let mut lines = rows_differ(&want, &got);
        if lines.is_empty() {
            lines.push(format!(
                "same grades, different bytes (line endings, quoting, order or a final newline): {}",
                first_difference(&expected, actual)
            ));
        }
        lines
    };
    Err(format!(
        "the gradebook differs from {shown}:\n  {}",
        lines.join("\n  ")
    ))
}

/// The line for gradebooks whose columns differ: the columns only one has,
/// and both headers.
fn columns_differ(want_header: &[String], got_header: &[String]) -> String {
    let only = |these: &[String], those: &[String]| -> String {
        let names: Vec<&str> = these
            .iter()
            .filter(|column| !those.contains(column))
            .map(String::as_str)
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    format!(
        "the columns differ (only expected: {}; only graded: {}):\n    expected: {}\n    got:      {}",
        only(want_header, got_header),
        only(got_header, want_header),
        want_header.join(","),
        got_header.join(",")
    )
}

/// A line per submission whose row differs between two gradebooks of the
/// same columns (`want`'s header names them): the cells that differ, or
/// that only one has the submission.
fn rows_differ(want: &[Vec<String>], got: &[Vec<String>]) -> Vec<String> {
    let header = want.first().cloned().unwrap_or_default();
    let by_name = |rows: &[Vec<String>]| -> BTreeMap<String, Vec<String>> {
        rows.iter()
            .skip(1)
            .map(|row| (row.first().cloned().unwrap_or_default(), row.clone()))
            .collect()
    };
    let (want_rows, got_rows) = (by_name(want), by_name(got));
    let names: BTreeSet<&String> = want_rows.keys().chain(got_rows.keys()).collect();
    let mut lines = Vec::new();
    for name in names {
        match (want_rows.get(name), got_rows.get(name)) {
            (Some(want), Some(got)) if want != got => {
                let cells: Vec<String> = header
                    .iter()
                    .enumerate()
                    .skip(1)
                    .filter(|(at, _)| want.get(*at) != got.get(*at))
                    .map(|(at, column)| {
                        format!(
                            "{column} expected {}, got {}",
                            want.get(at).map_or("nothing", String::as_str),
                            got.get(at).map_or("nothing", String::as_str)
                        )
                    })
                    .collect();
                lines.push(format!("{name}: {}", cells.join("; ")));
            }
            (Some(_), None) => lines.push(format!("{name}: expected, but not graded")),
            (None, Some(_)) => lines.push(format!("{name}: graded, but not expected")),
            _ => {}
        }
    }
    lines
}

fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|error| format!("cannot read {shown}: {error}"))?
        .len();
    if size > MAX_EXPECTED {
        return Err(format!(
            "{shown} is {size} bytes; an expected gradebook is a few kilobytes"
        ));
    }
    std::fs::read(path).map_err(|error| format!("cannot read {shown}: {error}"))
}

/// A CSV file's records, the header among them; `None` if it is not CSV.
pub fn parse_csv(bytes: &[u8]) -> Option<Vec<Vec<String>>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    reader
        .records()
        .map(|record| {
            record
                .ok()
                .map(|record| record.iter().map(str::to_owned).collect())
        })
        .collect()
}

/// "line 3: expected `…`, got `…`".
fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let want: Vec<&[u8]> = expected.split(|&byte| byte == b'\n').collect();
    let got: Vec<&[u8]> = actual.split(|&byte| byte == b'\n').collect();
    let show = |line: Option<&&[u8]>| match line {
        Some(line) => format!("{:?}", cut_at_boundary(&String::from_utf8_lossy(line), 200)),
        None => "the end of the file".to_owned(),
    };
    let at = (0..want.len().max(got.len()))
        .find(|&at| want.get(at) != got.get(at))
        .unwrap_or(0);
    format!(
        "line {}: expected {}, got {}",
        at + 1,
        show(want.get(at)),
        show(got.get(at))
    )
}
