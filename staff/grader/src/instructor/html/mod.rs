//! The class report: self-contained HTML pages (their style and their one
//! small script inline; no font, image or script to fetch), readable with
//! JavaScript off and printable.
//!
//! - `index.html`: per graded track, a grid of submissions by claims. Each
//!   row starts with what stays in place while the claims scroll beside it:
//!   the name, the points, the status, which names every claim the row did
//!   not pass (each a link to its failure), and the flags. Then one summary
//!   cell per lesson, the row's points on it, all of them on a 1280 px
//!   screen; a lesson opens into its claims, a column each (a checkbox that
//!   CSS reads, no script). The claims worth 0 points (the load test) make
//!   a group apart, after the lessons, and count in no lesson's pass rate
//!   and in no "hardest claim". Every claim's cell links to its verdict on
//!   the submission's page. A submission that does not compile shows that,
//!   in one cell, not a "?" per claim.
//! - `by-points.html`: the same, sorted by points. The column heads sort
//!   the grid in place when JavaScript runs (by name, by points, by a claim:
//!   its failures first); without it they lead to `index.html`,
//!   `by-points.html` and the claim's page.
//! - `NAME/index.html`: a submission's scorecard, its failures (step,
//!   expected, got, hint, the output, and where another connection acted
//!   during the failing call, that run drawn as a sequence diagram,
//!   `diagram`), its compiler error, the lines the review held and its
//!   notes.
//! - `claims/ID.html` (`claims/postgres-ID.html`, …): a claim's pass rate,
//!   who did not pass it, and its distinct failure messages with counts.
//!
//! The pages are made from the class's rows and each submission's
//! `results.json`, and hold no timing and no date: the same class gives the
//! same pages, whether graded in one go, in shards, or with any `-j`.
//!
//! The parts: `class_page` and its `grid` (a track's table of submissions
//! by claims, whose status cells `failing` writes), `submission_page`,
//! `claim_page`; `message`, a failure's
//! message as fields; `text`, escaping and links; `style.css` and
//! `sort.js`, inlined in every page.

mod claim_page;
mod class_page;
pub mod diagram;
mod failing;
mod grid;
mod message;
mod submission_page;
mod text;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::instructor::report::{LINKED, Row, TrackRow};
use lab_claims::{CLAIMS, Claim, Track};

use claim_page::claim_page;
use class_page::class_page;
use submission_page::submission_page;
use text::escape;

/// One page of the report: its path under the output folder, and its text.
pub struct Page {
    /// Relative to the output folder, `/`-separated.
    pub path: String,
    /// The HTML.
    pub html: String,
}

/// The folder of the claims' pages; a submission cannot have its name
/// (`engine::submission::OUTPUT_NAMES`).
pub const CLAIMS_FOLDER: &str = "claims";

/// The page of the class sorted by points.
pub const BY_POINTS: &str = "by-points.html";

/// The pages' style, inline in each page's head.
const STYLE: &str = include_str!("style.css");

/// Sorts a grid in place when a column head is clicked; without it the
/// heads are plain links to the pre-sorted pages. Inline in the class
/// pages' head, run when the page is loaded.
const SCRIPT: &str = include_str!("sort.js");

/// Every page of the report. `details` holds each submission's
/// `results.json`, by name (a name without one gets pages from its row);
/// `tracks` are the tracks graded.
pub fn pages(
    rows: &[Row],
    details: &BTreeMap<String, Value>,
    sandbox: bool,
    tracks: &[Track],
) -> Vec<Page> {
    let mut pages = vec![
        Page {
            path: "index.html".to_owned(),
            html: class_page(rows, sandbox, Order::Name, tracks),
        },
        Page {
            path: BY_POINTS.to_owned(),
            html: class_page(rows, sandbox, Order::Points, tracks),
        },
    ];
    let empty = Value::Null;
    for row in rows {
        let results = details.get(&row.name).unwrap_or(&empty);
        pages.push(Page {
            path: format!("{}/index.html", row.name),
            html: submission_page(row, results, tracks),
        });
    }
    for (at, &track) in tracks.iter().enumerate() {
        for claim in CLAIMS.iter().filter(|claim| claim.on(track)) {
            pages.push(Page {
                path: format!("{CLAIMS_FOLDER}/{}.html", claim_key(track, claim.id)),
                html: claim_page(rows, details, track, at, claim),
            });
        }
    }
    pages
}

/// The order of the class's rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Name,
    Points,
}

/// The start of every page: its title and style; on a class page
/// (`class`), the rules that open the grid's lessons and the sort script.
fn head(page: &mut String, title: &str, class: bool) {
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(page, "<title>{}</title>", escape(title));
    let _ = write!(page, "<style>\n{STYLE}");
    if class {
        page.push_str(&grid::toggle_rules());
    }
    page.push_str("</style>\n");
    if class {
        let _ = writeln!(
            page,
            "<script>\n'use strict';\naddEventListener('DOMContentLoaded', function () {{\n{SCRIPT}}});\n</script>"
        );
    }
    page.push_str("</head>\n<body>\n");
}

/// The claims of `track`: those worth points, then those worth none.
fn claims_on(track: Track) -> (Vec<&'static Claim>, Vec<&'static Claim>) {
    CLAIMS
        .iter()
        .filter(|claim| claim.on(track))
        .partition(|claim| claim.points > 0)
}

/// A claim's verdict for a row: `pass`, `fail` or `error`.
fn verdict(row: &Row, at: usize, id: &str) -> String {
    row.tracks
        .get(at)
        .and_then(|track| track.claims.iter().find(|(claim, _, _)| claim == id))
        .map_or_else(|| "error".to_owned(), |(_, status, _)| status.clone())
}

/// The points of a row, all tracks together.
fn points(row: &Row) -> u32 {
    row.tracks.iter().map(TrackRow::earned).sum()
}

/// What the run came to, in a few words: `pass`, `fail`, `does not
/// compile`, `timed out`, …
fn outcome(row: &Row) -> &str {
    let short = row.short.strip_prefix("on hold; ").unwrap_or(&row.short);
    let short = short.find(LINKED).map_or(short, |at| &short[..at]);
    if short.starts_with("fail") {
        "fail"
    } else {
        short
    }
}

/// What a row's result says past its outcome: `; files are links to
/// correct's`, or nothing.
fn linked(row: &Row) -> &str {
    row.short.find(LINKED).map_or("", |at| &row.short[at..])
}

/// A claim's id on a track, as the pages name it: `L2.7`, `postgres-L2.7`.
fn claim_key(track: Track, id: &str) -> String {
    match track {
        Track::Sqlite => id.to_owned(),
        _ => format!("{}-{id}", track.key()),
    }
}

/// Of `rows`, how many pass `id` on the track at `at`.
fn rate(rows: &[&Row], at: usize, id: &str) -> usize {
    rows.iter()
        .filter(|row| verdict(row, at, id) == "pass")
        .count()
}

#[cfg(test)]
mod tests {
    /// A submission may not be named like a page or folder of the report,
    /// which sits beside the submissions' folders.
    #[test]
    fn the_report_names_are_refused_as_submissions() {
        for name in [super::BY_POINTS, super::CLAIMS_FOLDER] {
            assert!(
                crate::engine::submission::OUTPUT_NAMES.contains(&name),
                "{name} is not in engine::submission::OUTPUT_NAMES"
            );
        }
    }
}
