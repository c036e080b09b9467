//! The class report: self-contained HTML pages (their style and their one
//! small script inline; no font, image or script to fetch), readable with
//! JavaScript off and printable.
//!
//! - `index.html`: per graded track, a grid of submissions by claims. Each
//!   row starts with what stays in place while the claims scroll beside it:
//!   the name, the points, the status and the flags. The claims worth points
//!   come grouped by lesson; the claims worth 0 points (the load test) come
//!   apart, after them, and count in no lesson's pass rate and in no
//!   "hardest claim". Every cell links to its verdict on the submission's
//!   page. A submission that does not compile shows that, in one cell, not
//!   a "?" per claim.
//! - `by-points.html`: the same, sorted by points. The column heads sort
//!   the grid in place when JavaScript runs (by name, by points, by a claim:
//!   its failures first); without it they lead to `index.html`,
//!   `by-points.html` and the claim's page.
//! - `NAME/index.html`: a submission's scorecard, its failures (step,
//!   expected, got, hint, the output), its compiler error, the lines the
//!   review held and its notes.
//! - `claims/ID.html` (`claims/postgres-ID.html`, …): a claim's pass rate,
//!   who did not pass it, and its distinct failure messages with counts.
//!
//! The pages are made from the class's rows and each submission's
//! `results.json`, and hold no timing and no date: the same class gives the
//! same pages, whether graded in one go, in shards, or with any `-j`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::claims::{CLAIMS, Claim, LESSONS, Track};
use crate::report::{ON_HOLD, Row, TrackRow};
use crate::score::tracks;

/// One page of the report: its path under the output folder, and its text.
pub struct Page {
    /// Relative to the output folder, `/`-separated.
    pub path: String,
    /// The HTML.
    pub html: String,
}

/// The folder of the claims' pages; a submission cannot have its name
/// (`submission::OUTPUT_NAMES`).
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
/// `results.json`, by name (a name without one gets pages from its row).
pub fn pages(rows: &[Row], details: &BTreeMap<String, Value>, sandbox: bool) -> Vec<Page> {
    let mut pages = vec![
        Page {
            path: "index.html".to_owned(),
            html: class_page(rows, sandbox, Order::Name),
        },
        Page {
            path: BY_POINTS.to_owned(),
            html: class_page(rows, sandbox, Order::Points),
        },
    ];
    let empty = Value::Null;
    for row in rows {
        let results = details.get(&row.name).unwrap_or(&empty);
        pages.push(Page {
            path: format!("{}/index.html", row.name),
            html: submission_page(row, results),
        });
    }
    for (at, &track) in tracks().iter().enumerate() {
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

/// The start of every page: its title and style, and `script` when given.
fn head(page: &mut String, title: &str, script: bool) {
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(page, "<title>{}</title>", escape(title));
    let _ = writeln!(page, "<style>\n{STYLE}</style>");
    if script {
        let _ = writeln!(
            page,
            "<script>\n'use strict';\naddEventListener('DOMContentLoaded', function () {{\n{SCRIPT}}});\n</script>"
        );
    }
    page.push_str("</head>\n<body>\n");
}

/// `index.html` or `by-points.html`.
fn class_page(rows: &[Row], sandbox: bool, order: Order) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    if order == Order::Points {
        sorted.sort_by(|a, b| points(b).cmp(&points(a)).then_with(|| a.name.cmp(&b.name)));
    }
    let mut page = String::new();
    head(&mut page, "fencing-lab: class report", true);
    let _ = writeln!(page, "<h1>Class report: {} submissions</h1>", rows.len());
    if sandbox {
        page.push_str(
            "<p><span class=\"sandbox-on\">Every build and test run went through the sandbox.</span> ",
        );
    } else {
        page.push_str(
            "<p class=\"sandbox-off\">Graded WITHOUT the sandbox (--no-sandbox): the code under \
             test could read the reference and other submissions.</p>\n<p>",
        );
    }
    let _ = writeln!(
        page,
        "<span class=\"noprint\">Sorted by <span id=\"sorted\">{}</span>; sort by \
         <a href=\"index.html\">name</a>, <a href=\"{BY_POINTS}\">points</a>, or a claim \
         (its head; with JavaScript off, the claim's page lists who failed it).</span></p>",
        match order {
            Order::Name => "name",
            Order::Points => "points",
        }
    );
    for (at, &track) in tracks().iter().enumerate() {
        grid(&mut page, &sorted, track, at, order);
    }
    page.push_str(
        "<p class=\"legend\"><span class=\"pass\">&#10003; pass</span>\
         <span class=\"fail\">&#10007; fail</span>\
         <span class=\"error\">? no result</span> \
         A cell leads to its verdict. The outlined rate is the claim the class passes least; \
         claims worth 0 points stand apart, at the right, and count in no pass rate of a lesson.</p>\n",
    );
    page.push_str("</body>\n</html>\n");
    page
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
    if short.starts_with("fail") {
        "fail"
    } else {
        short
    }
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

/// One track's grid.
fn grid(page: &mut String, rows: &[&Row], track: Track, at: usize, order: Order) {
    let (scored, unscored) = claims_on(track);
    let lessons: Vec<(&str, &str, usize)> = LESSONS
        .iter()
        .map(|lesson| {
            let count = scored
                .iter()
                .filter(|claim| claim.lesson().id == lesson.id)
                .count();
            (lesson.id, lesson.title, count)
        })
        .filter(|(_, _, count)| *count > 0)
        .collect();
    let all: Vec<&Claim> = scored.iter().chain(&unscored).copied().collect();
    let rates: Vec<usize> = all.iter().map(|claim| rate(rows, at, claim.id)).collect();
    // The hardest claim stands out only where the claims' rates differ.
    let scored_rates = &rates[..scored.len()];
    let hardest = scored_rates
        .iter()
        .min()
        .copied()
        .filter(|least| scored_rates.iter().any(|rate| rate != least));
    let total = crate::claims::total_points_on(track);
    let sort_note = match order {
        Order::Name => "sorted by name",
        Order::Points => "sorted by points",
    };

    let _ = writeln!(
        page,
        "<h2>{}</h2>\n<div class=\"scroll\">\n<table class=\"grid\" data-track=\"{}\" \
         aria-label=\"{} claims, {sort_note}\">",
        escape(track.name()),
        track.key(),
        escape(track.name()),
    );
    page.push_str(
        "<thead>\n<tr><th class=\"fixed c-name\" rowspan=\"2\">\
         <a href=\"index.html\" data-sort=\"name\">submission</a></th>",
    );
    let _ = write!(
        page,
        "<th class=\"fixed c-points\" rowspan=\"2\">\
         <a href=\"{BY_POINTS}\" data-sort=\"points\">points</a></th>\
         <th class=\"fixed c-status\" rowspan=\"2\">status</th>\
         <th class=\"fixed c-flags\" rowspan=\"2\" title=\"lines the review held\">flags</th>"
    );
    for (id, title, count) in &lessons {
        let _ = write!(
            page,
            "<th class=\"lesson\" colspan=\"{count}\" title=\"{}\">{}</th>",
            escape(title),
            escape(id)
        );
    }
    if !unscored.is_empty() {
        let _ = write!(
            page,
            "<th class=\"lesson unscored-head\" colspan=\"{}\" \
             title=\"worth 0 points: in no total and no lesson's pass rate\">0 points</th>",
            unscored.len()
        );
    }
    page.push_str("</tr>\n<tr class=\"claims\">");
    for (index, claim) in all.iter().enumerate() {
        let first =
            index == 0 || index == scored.len() || all[index - 1].lesson().id != claim.lesson().id;
        let label = if claim.points > 0 {
            claim
                .id
                .split_once('.')
                .map_or(claim.id, |(_, number)| number)
        } else {
            claim.id
        };
        let _ = write!(
            page,
            "<th{} title=\"{}: {} ({} points)\"><a href=\"{CLAIMS_FOLDER}/{}.html\" \
             data-sort=\"{}\">{}</a></th>",
            if first { " class=\"first\"" } else { "" },
            escape(claim.id),
            escape(claim.text),
            claim.points,
            url_segment(&claim_key(track, claim.id)),
            escape(claim.id),
            escape(label)
        );
    }
    page.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in rows {
        let link = url_segment(&row.name);
        let earned = row.tracks.get(at).map_or(0, TrackRow::earned);
        let shown = if row.held {
            format!("held {earned}/{total}")
        } else {
            format!("{earned}/{total}")
        };
        // On this track: a submission that lost only another track's
        // claims passes here.
        let (status, class) = match outcome(row) {
            _ if row.held => (ON_HOLD, "error"),
            "pass" | "fail" if earned == total => ("pass", "pass"),
            "pass" | "fail" => ("fail", "fail"),
            other => (other, "error"),
        };
        let _ = write!(
            page,
            "<tr class=\"status-{}\" data-submission=\"{}\" data-points=\"{earned}\">\
             <td class=\"fixed c-name\" title=\"{}\"><a href=\"{link}/index.html\">{}</a></td>\
             <td class=\"fixed c-points\" data-points=\"{earned}\">{shown}</td>\
             <td class=\"fixed c-status\" title=\"{}\">{}</td>\
             <td class=\"fixed c-flags\">{}</td>",
            class,
            escape(&row.name),
            escape(&row.name),
            escape(&row.name),
            escape(&row.short),
            escape(status),
            match row.flags {
                0 => "0".to_owned(),
                flags => format!("<a href=\"{link}/index.html#flags\">{flags}</a>"),
            }
        );
        let nothing_ran = all
            .iter()
            .all(|claim| verdict(row, at, claim.id) == "error");
        let word = outcome(row);
        if nothing_ran && word != "pass" && !word.is_empty() {
            // A compile error (or a build that timed out): one cell that
            // says so, leading to the compiler's words.
            let _ = write!(
                page,
                "<td class=\"nocompile first\" colspan=\"{}\">\
                 <a href=\"{link}/index.html#error\">{}</a></td>",
                all.len(),
                escape(word)
            );
        } else {
            for (index, claim) in all.iter().enumerate() {
                let status = verdict(row, at, claim.id);
                let mark = match status.as_str() {
                    "pass" => "&#10003;",
                    "fail" => "&#10007;",
                    _ => "?",
                };
                let anchor = if status == "pass" { "claim" } else { "fail" };
                let mut class = status.clone();
                if claim.points == 0 {
                    class.push_str(" unscored");
                }
                if index == 0
                    || index == scored.len()
                    || all[index - 1].lesson().id != claim.lesson().id
                {
                    class.push_str(" first");
                }
                let _ = write!(
                    page,
                    "<td class=\"{class}\" data-claim=\"{}\"><a href=\"{link}/index.html#{anchor}-{}\" \
                     title=\"{} {}: {status}\">{mark}</a></td>",
                    escape(claim.id),
                    escape(&claim_key(track, claim.id)),
                    escape(&row.name),
                    escape(claim.id),
                );
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str(
        "</tbody>\n<tfoot>\n<tr><th class=\"fixed c-label\" colspan=\"4\">claim pass rate</th>",
    );
    for (index, (claim, passed)) in all.iter().zip(&rates).enumerate() {
        let mut class = "rate".to_owned();
        if claim.points == 0 {
            class.push_str(" unscored");
        } else if Some(*passed) == hardest {
            class.push_str(" hardest");
        }
        if index == 0 || index == scored.len() || all[index - 1].lesson().id != claim.lesson().id {
            class.push_str(" first");
        }
        let _ = write!(
            page,
            "<td class=\"{class}\" data-claim=\"{}\" title=\"{}: {passed} of {} pass{}\">{}</td>",
            escape(claim.id),
            escape(claim.id),
            rows.len(),
            if claim.points == 0 {
                "; worth 0 points, in no lesson's rate"
            } else {
                ""
            },
            percent(*passed, rows.len())
        );
    }
    page.push_str("</tr>\n<tr><th class=\"fixed c-label\" colspan=\"4\">lesson pass rate</th>");
    for (id, _, count) in &lessons {
        let passed: usize = scored
            .iter()
            .zip(&rates)
            .filter(|(claim, _)| claim.lesson().id == *id)
            .map(|(_, passed)| passed)
            .sum();
        let _ = write!(
            page,
            "<td class=\"rate first\" colspan=\"{count}\" data-lesson=\"{}\">{}</td>",
            escape(id),
            percent(passed, count * rows.len())
        );
    }
    if !unscored.is_empty() {
        let _ = write!(
            page,
            "<td class=\"rate unscored first\" colspan=\"{}\">not counted</td>",
            unscored.len()
        );
    }
    page.push_str("</tr>\n</tfoot>\n</table>\n</div>\n");
}

/// A failure message's parts: the lines before its fields, and its fields
/// (`step`, `expected`, `got`, `open`, `hint`, `more`), each with the
/// lines indented under it.
fn fields(message: &str) -> (Vec<&str>, Vec<(&str, String)>) {
    let mut preface = Vec::new();
    let mut fields: Vec<(&str, String)> = Vec::new();
    for line in message.lines() {
        let field = line
            .strip_prefix("  ")
            .filter(|rest| !rest.starts_with(' '))
            .and_then(|rest| rest.split_once(':'))
            .filter(|(label, _)| {
                !label.is_empty()
                    && label.len() <= 10
                    && label.chars().all(|c| c.is_ascii_lowercase())
            });
        match (field, fields.last_mut()) {
            (Some((label, value)), _) => fields.push((label, value.trim().to_owned())),
            (None, Some((_, value))) if line.starts_with("   ") => {
                value.push('\n');
                value.push_str(line.trim_start());
            }
            (None, None) => preface.push(line),
            (None, Some((_, value))) => {
                value.push('\n');
                value.push_str(line);
            }
        }
    }
    (preface, fields)
}

/// The `results.json` entry of a claim on a track.
fn test_of<'a>(results: &'a Value, track: Track, id: &str) -> Option<&'a Value> {
    let start = match track {
        Track::Sqlite => format!("{id} "),
        _ => format!("{}: {id} ", track.name()),
    };
    results["tests"].as_array()?.iter().find(|test| {
        test["name"]
            .as_str()
            .is_some_and(|name| name.starts_with(&start))
    })
}

/// A submission's page.
fn submission_page(row: &Row, results: &Value) -> String {
    let mut page = String::new();
    head(&mut page, &format!("fencing-lab: {}", row.name), false);
    page.push_str("<nav><a href=\"../index.html\">&larr; the class</a></nav>\n");
    let _ = writeln!(page, "<h1>{}</h1>", escape(&row.name));
    let grader = &results["grader"];
    let points: Vec<String> = tracks()
        .iter()
        .zip(&row.tracks)
        .map(|(track, scores)| {
            format!(
                "{} {}/{}",
                track.name(),
                scores.earned(),
                crate::claims::total_points_on(*track)
            )
        })
        .collect();
    let _ = writeln!(
        page,
        "<p class=\"summary\"><strong class=\"status-{}\">{}</strong> &middot; {}{}</p>",
        escape(&row.status),
        escape(&row.short),
        escape(&points.join(", ")),
        if row.held {
            " &middot; <strong>on hold</strong>: its points are not in the total until an \
             instructor reads the lines below and accepts it (<code>--accept NAME</code>)"
        } else {
            ""
        }
    );
    if let Some(error) = grader["error"].as_str() {
        let title = if row.short.ends_with("does not compile") {
            "Compiler error"
        } else {
            "Why it was not graded in full"
        };
        let _ = writeln!(
            page,
            "<section id=\"error\"><h2>{title}</h2><pre class=\"block\">{}</pre></section>",
            escape(error)
        );
    }
    let flags: Vec<&str> = grader["flags"]
        .as_array()
        .map(|flags| flags.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !flags.is_empty() {
        let accepted = grader["accepted"].as_bool().unwrap_or(false);
        let _ = writeln!(
            page,
            "<section id=\"flags\"><h2>Flags: {} lines the review held</h2><p>{}</p>\
             <pre class=\"block\">{}</pre></section>",
            flags.len(),
            if accepted {
                "Accepted by the instructor (--accept), though its source names what the \
                 allowlist (grader/allowlist.txt) does not have:"
            } else {
                "Its source names what the allowlist (grader/allowlist.txt) does not have:"
            },
            escape(&flags.join("\n"))
        );
    }
    let notes: Vec<&str> = grader["notes"]
        .as_array()
        .map(|notes| notes.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !notes.is_empty() {
        page.push_str("<section id=\"notes\"><h2>Notes</h2><ul>\n");
        for note in notes {
            let _ = writeln!(page, "<li><pre>{}</pre></li>", escape(note));
        }
        page.push_str("</ul></section>\n");
    }
    for (at, &track) in tracks().iter().enumerate() {
        let (scored, unscored) = claims_on(track);
        let all: Vec<&Claim> = scored.iter().chain(&unscored).copied().collect();
        let _ = writeln!(
            page,
            "<h2>Scorecard: {}</h2>\n<table class=\"card\">\n<tr><th>claim</th><th>statement</th>\
             <th>points</th><th>verdict</th></tr>",
            escape(track.name())
        );
        for claim in &all {
            let status = verdict(row, at, claim.id);
            let earned = row
                .tracks
                .get(at)
                .and_then(|scores| scores.claims.iter().find(|(id, _, _)| id == claim.id))
                .map_or(0, |(_, _, earned)| *earned);
            // A claim worth 0 points has a verdict but no grade.
            let points = if claim.points == 0 {
                "not graded".to_owned()
            } else {
                format!("{earned}/{}", claim.points)
            };
            let key = claim_key(track, claim.id);
            let nothing_ran = grader["error"].is_string()
                && all
                    .iter()
                    .all(|claim| verdict(row, at, claim.id) == "error");
            let shown = match status.as_str() {
                "pass" => "pass".to_owned(),
                other if nothing_ran => format!("<a href=\"#error\">{}</a>", escape(other)),
                other => format!("<a href=\"#fail-{}\">{}</a>", escape(&key), escape(other)),
            };
            let _ = writeln!(
                page,
                "<tr id=\"claim-{}\"><td><a href=\"../{CLAIMS_FOLDER}/{}.html\">{}</a></td>\
                 <td>{}</td><td>{points}</td><td class=\"{}{}\">{shown}</td></tr>",
                escape(&key),
                url_segment(&key),
                escape(claim.id),
                escape(claim.text),
                escape(&status),
                if claim.points == 0 { " unscored" } else { "" },
            );
        }
        page.push_str("</table>\n");
        let failing: Vec<&&Claim> = all
            .iter()
            .filter(|claim| verdict(row, at, claim.id) != "pass")
            .collect();
        if failing.is_empty() {
            continue;
        }
        let _ = writeln!(page, "<h2>What did not pass: {}</h2>", escape(track.name()));
        if failing.len() == all.len()
            && grader["error"].is_string()
            && failing
                .iter()
                .all(|claim| verdict(row, at, claim.id) == "error")
        {
            // Nothing ran: one line, not a block per claim saying so.
            let _ = writeln!(
                page,
                "<p>No claim ran: <a href=\"#error\">see why above</a>.</p>"
            );
            continue;
        }
        for claim in failing {
            let status = verdict(row, at, claim.id);
            let key = claim_key(track, claim.id);
            let test = test_of(results, track, claim.id);
            let message = test
                .and_then(|test| test["message"].as_str())
                .unwrap_or("no result: see the submission's message above");
            let _ = writeln!(
                page,
                "<section class=\"failure{}\" id=\"fail-{}\"><h3>{} {}{}</h3>",
                if status == "fail" { "" } else { " noresult" },
                escape(&key),
                escape(claim.id),
                escape(claim.text),
                if claim.points == 0 {
                    " (not graded: 0 points)"
                } else {
                    ""
                }
            );
            failure_body(&mut page, message);
            if let Some(output) = test.and_then(|test| test["output"].as_str()) {
                let _ = writeln!(
                    page,
                    "<details open><summary>output</summary><pre class=\"block output\">{}</pre></details>",
                    escape(output)
                );
            }
            let _ = writeln!(
                page,
                "<p class=\"muted noprint\"><a href=\"../{CLAIMS_FOLDER}/{}.html\">how the class did on {}</a></p></section>",
                url_segment(&key),
                escape(claim.id)
            );
        }
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// A failure's message: its first lines, then its fields.
fn failure_body(page: &mut String, message: &str) {
    let (preface, fields) = fields(message);
    let preface = preface.join("\n");
    if !preface.trim().is_empty() {
        let _ = writeln!(
            page,
            "<pre class=\"preface\">{}</pre>",
            escape(preface.trim())
        );
    }
    if !fields.is_empty() {
        page.push_str("<dl class=\"fields\">\n");
        for (label, value) in fields {
            let _ = writeln!(
                page,
                "<dt class=\"{}\">{}</dt><dd class=\"{}\"><pre>{}</pre></dd>",
                escape(label),
                escape(label),
                escape(label),
                escape(&value)
            );
        }
        page.push_str("</dl>\n");
    }
}

/// A claim's page.
fn claim_page(
    rows: &[Row],
    details: &BTreeMap<String, Value>,
    track: Track,
    at: usize,
    claim: &Claim,
) -> String {
    let mut page = String::new();
    let key = claim_key(track, claim.id);
    head(
        &mut page,
        &format!("fencing-lab: {} {key}", track.name()),
        false,
    );
    page.push_str("<nav><a href=\"../index.html\">&larr; the class</a></nav>\n");
    let _ = writeln!(
        page,
        "<h1>{} {}: {}</h1>\n<p>{}, lesson {}: {}. Worth {} point{}{}.</p>",
        escape(track.name()),
        escape(claim.id),
        escape(claim.text),
        escape(track.name()),
        escape(claim.lesson().id),
        escape(claim.lesson().title),
        claim.points,
        if claim.points == 1 { "" } else { "s" },
        if claim.points == 0 {
            ": shown apart in the grid, in no total and no lesson's pass rate"
        } else {
            ""
        }
    );
    let all: Vec<&Row> = rows.iter().collect();
    let passed = rate(&all, at, claim.id);
    let _ = writeln!(
        page,
        "<p class=\"rate\">Pass rate: <strong>{}</strong> ({passed} of {} submissions).</p>",
        percent(passed, rows.len()),
        rows.len()
    );
    let empty = Value::Null;
    // Who did not pass, failures first, and the messages they got.
    let mut others: Vec<(&Row, String, String)> = rows
        .iter()
        .filter_map(|row| {
            let status = verdict(row, at, claim.id);
            if status == "pass" {
                return None;
            }
            let results = details.get(&row.name).unwrap_or(&empty);
            let message = test_of(results, track, claim.id)
                .and_then(|test| test["message"].as_str())
                .unwrap_or_default()
                .to_owned();
            Some((row, status, message))
        })
        .collect();
    others.sort_by(|a, b| {
        (a.1 != "fail")
            .cmp(&(b.1 != "fail"))
            .then(a.0.name.cmp(&b.0.name))
    });
    if others.is_empty() {
        page.push_str("<p>Every submission passes it.</p>\n");
    } else {
        let _ = writeln!(
            page,
            "<h2>Who did not pass it ({})</h2>\n<table class=\"list\"><tr><th>submission</th>\
             <th>verdict</th><th>got</th></tr>",
            others.len()
        );
        for (row, status, message) in &others {
            let got = fields(message)
                .1
                .into_iter()
                .find(|(label, _)| *label == "got")
                .map(|(_, value)| value)
                .unwrap_or_else(|| message.lines().next().unwrap_or_default().to_owned());
            let _ = writeln!(
                page,
                "<tr><td><a href=\"../{}/index.html#fail-{}\">{}</a></td><td class=\"{}\">{}</td>\
                 <td><pre>{}</pre></td></tr>",
                url_segment(&row.name),
                escape(&key),
                escape(&row.name),
                escape(status),
                escape(status),
                escape(&got)
            );
        }
        page.push_str("</table>\n");
        // The distinct failures: the same expected and got are one.
        let mut groups: BTreeMap<(String, String), Vec<(&str, &str)>> = BTreeMap::new();
        for (row, status, message) in &others {
            let (_, found) = fields(message);
            let field = |name: &str| {
                found
                    .iter()
                    .find(|(label, _)| *label == name)
                    .map(|(_, value)| value.clone())
            };
            let group = match (field("expected"), field("got")) {
                (Some(expected), Some(got)) => (expected, got),
                _ => (status.clone(), message.clone()),
            };
            groups
                .entry(group)
                .or_default()
                .push((row.name.as_str(), message.as_str()));
        }
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let _ = writeln!(page, "<h2>The distinct failures ({})</h2>", groups.len());
        for (_, members) in &groups {
            let names: Vec<String> = members
                .iter()
                .map(|(name, _)| {
                    format!(
                        "<a href=\"../{}/index.html#fail-{}\">{}</a>",
                        url_segment(name),
                        escape(&key),
                        escape(name)
                    )
                })
                .collect();
            let _ = writeln!(
                page,
                "<section class=\"failure\"><h3>{} submission{}: {}</h3>",
                members.len(),
                if members.len() == 1 { "" } else { "s" },
                names.join(", ")
            );
            failure_body(&mut page, members[0].1);
            page.push_str("</section>\n");
        }
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// "83%", or "-" for an empty class.
fn percent(passed: usize, of: usize) -> String {
    match (passed * 100 + of / 2).checked_div(of) {
        Some(rate) => format!("{rate}%"),
        None => "-".to_owned(),
    }
}

/// Text for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A folder name as one segment of a relative link.
fn url_segment(name: &str) -> String {
    let mut out = String::new();
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_message_splits_into_its_fields() {
        let message = "failed: t\n\nclaim L1.3 failed\n  step:     schedule 7\n               1. a\n  expected: x\n  got:      y\n  hint:     z";
        let (preface, found) = fields(message);
        assert_eq!(preface, ["failed: t", "", "claim L1.3 failed"]);
        let labels: Vec<&str> = found.iter().map(|(label, _)| *label).collect();
        assert_eq!(labels, ["step", "expected", "got", "hint"]);
        assert_eq!(found[0].1, "schedule 7\n1. a");
    }

    #[test]
    fn names_are_escaped_and_linked_as_one_segment() {
        assert_eq!(escape("<a&\"b'>"), "&lt;a&amp;&quot;b&#39;&gt;");
        assert_eq!(url_segment("a b/#?"), "a%20b%2F%23%3F");
    }
}
