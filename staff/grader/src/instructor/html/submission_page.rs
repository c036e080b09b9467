//! `NAME/index.html`: a submission's page. Its summary, then what kept it
//! from being graded in full (the compiler's error), the lines the review
//! held, its notes; then, track by track, its scorecard and each claim it
//! did not pass, with the failure's fields and what the test printed.

use std::fmt::Write as _;

use serde_json::Value;

use super::diagram;
use super::message::{failure_body, test_of};
use super::text::{escape, url_segment};
use super::{CLAIMS_FOLDER, claim_key, claims_on, head, verdict};
use crate::instructor::report::Row;
use lab_claims::{Claim, Track};

/// A submission's page.
pub(super) fn submission_page(row: &Row, results: &Value, tracks: &[Track]) -> String {
    let mut page = String::new();
    head(&mut page, &format!("fencing-lab: {}", row.name), false);
    page.push_str("<nav><a href=\"../index.html\">&larr; the class</a></nav>\n");
    let _ = writeln!(page, "<h1>{}</h1>", escape(&row.name));
    let grader = &results["grader"];
    summary(&mut page, row, tracks);
    error(&mut page, row, grader);
    flags(&mut page, grader);
    notes(&mut page, grader);
    for (at, &track) in tracks.iter().enumerate() {
        let (scored, unscored) = claims_on(track);
        let all: Vec<&Claim> = scored.iter().chain(&unscored).copied().collect();
        scorecard(&mut page, row, grader, track, at, &all);
        failures(&mut page, row, results, track, at, &all);
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// The line under the name: the status, the points per track, and whether
/// it is on hold.
fn summary(page: &mut String, row: &Row, tracks: &[Track]) {
    let points: Vec<String> = tracks
        .iter()
        .zip(&row.tracks)
        .map(|(track, scores)| {
            format!(
                "{} {}/{}",
                track.name(),
                scores.earned(),
                lab_claims::total_points_on(*track)
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
}

/// Why it was not graded in full (the compiler's error), if it was not.
fn error(page: &mut String, row: &Row, grader: &Value) {
    if let Some(error) = grader["error"].as_str() {
        let title = if super::outcome(row) == "does not compile" {
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
}

/// The lines the review held, if any.
fn flags(page: &mut String, grader: &Value) {
    let flags = strings(&grader["flags"]);
    if !flags.is_empty() {
        let accepted = grader["accepted"].as_bool().unwrap_or(false);
        let _ = writeln!(
            page,
            "<section id=\"flags\"><h2>Flags: {} lines the review held</h2><p>{}</p>\
             <pre class=\"block\">{}</pre></section>",
            flags.len(),
            if accepted {
                "Accepted by the instructor (--accept), though its source names what the \
                 allowlist (staff/grader/allowlist.txt) does not have:"
            } else {
                "Its source names what the allowlist (staff/grader/allowlist.txt) does not have:"
            },
            escape(&flags.join("\n"))
        );
    }
}

/// The grader's notes, if any.
fn notes(page: &mut String, grader: &Value) {
    let notes = strings(&grader["notes"]);
    if !notes.is_empty() {
        page.push_str("<section id=\"notes\"><h2>Notes</h2><ul>\n");
        for note in notes {
            let _ = writeln!(page, "<li><pre>{}</pre></li>", escape(note));
        }
        page.push_str("</ul></section>\n");
    }
}

/// The strings of a JSON array; none if it is not one.
fn strings(array: &Value) -> Vec<&str> {
    array
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A track's scorecard: a line per claim, its verdict leading to its
/// failure below (or to the error, when nothing ran).
fn scorecard(
    page: &mut String,
    row: &Row,
    grader: &Value,
    track: Track,
    at: usize,
    all: &[&Claim],
) {
    let _ = writeln!(
        page,
        "<h2>Scorecard: {}</h2>\n<table class=\"card\">\n<tr><th>claim</th><th>statement</th>\
         <th>points</th><th>verdict</th></tr>",
        escape(track.name())
    );
    let nothing_ran = grader["error"].is_string()
        && all
            .iter()
            .all(|claim| verdict(row, at, claim.id) == "error");
    for claim in all {
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
}

/// What did not pass on a track: a section per claim, or one line when
/// nothing ran.
fn failures(
    page: &mut String,
    row: &Row,
    results: &Value,
    track: Track,
    at: usize,
    all: &[&Claim],
) {
    let failing: Vec<&&Claim> = all
        .iter()
        .filter(|claim| verdict(row, at, claim.id) != "pass")
        .collect();
    if failing.is_empty() {
        return;
    }
    let _ = writeln!(page, "<h2>What did not pass: {}</h2>", escape(track.name()));
    if failing.len() == all.len()
        && results["grader"]["error"].is_string()
        && failing
            .iter()
            .all(|claim| verdict(row, at, claim.id) == "error")
    {
        // Nothing ran: one line, not a block per claim saying so.
        let _ = writeln!(
            page,
            "<p>No claim ran: <a href=\"#error\">see why above</a>.</p>"
        );
        return;
    }
    for claim in failing {
        failure(page, results, track, claim, &verdict(row, at, claim.id));
    }
}

/// A claim that did not pass: its failure's message, what the test
/// printed, and a link to how the class did on it.
fn failure(page: &mut String, results: &Value, track: Track, claim: &Claim, status: &str) {
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
    failure_body(page, message);
    // What happened in the failing step, drawn from the facts the test
    // sent, where another connection acted during the call.
    // Beside it, the reference's run of the same step, where there is one.
    let title = format!("{} on {}: the failing call", claim.id, track.name());
    let facts = test.and_then(|test| test["facts"].as_str());
    let reference = test.and_then(|test| test["reference_facts"].as_str());
    let drawn = match (facts, reference) {
        (Some(facts), Some(reference)) => diagram::beside(facts, reference, &title),
        _ => None,
    };
    let drawn = drawn.or_else(|| {
        facts
            .and_then(|facts| diagram::svg(facts, &format!("{title}'s run")))
            .map(|svg| format!("<figure class=\"run\">{svg}</figure>"))
    });
    if let Some(drawn) = drawn {
        let _ = writeln!(page, "{drawn}");
    }
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
