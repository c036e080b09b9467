//! `claims/ID.html`: a claim's page. Its statement and lesson, the class's
//! pass rate, who did not pass it and what they got, and its distinct
//! failures with how many got each.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::message::{failure_body, fields, test_of};
use super::text::{escape, percent, url_segment};
use super::{claim_key, head, rate, verdict};
use crate::instructor::report::Row;
use lab_claims::{Claim, Track};

/// A submission that did not pass the claim: its row, its verdict and its
/// failure's message.
type Missed<'a> = (&'a Row, String, String);

/// A claim's page.
pub(super) fn claim_page(
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
    heading(&mut page, track, claim);
    let all: Vec<&Row> = rows.iter().collect();
    let passed = rate(&all, at, claim.id);
    let _ = writeln!(
        page,
        "<p class=\"rate\">Pass rate: <strong>{}</strong> ({passed} of {} submissions).</p>",
        percent(passed, rows.len()),
        rows.len()
    );
    let others = missed(rows, details, track, at, claim);
    if others.is_empty() {
        page.push_str("<p>Every submission passes it.</p>\n");
    } else {
        who_did_not_pass(&mut page, &others, &key);
        distinct_failures(&mut page, &others, &key);
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// The claim's statement, its lesson and its points.
fn heading(page: &mut String, track: Track, claim: &Claim) {
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
}

/// Who did not pass, failures first, and the messages they got.
fn missed<'a>(
    rows: &'a [Row],
    details: &BTreeMap<String, Value>,
    track: Track,
    at: usize,
    claim: &Claim,
) -> Vec<Missed<'a>> {
    let empty = Value::Null;
    let mut others: Vec<Missed> = rows
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
    others
}

/// A line per submission that did not pass: its verdict and what it got,
/// leading to its failure on its page.
fn who_did_not_pass(page: &mut String, others: &[Missed], key: &str) {
    let _ = writeln!(
        page,
        "<h2>Who did not pass it ({})</h2>\n<table class=\"list\"><tr><th>submission</th>\
         <th>verdict</th><th>got</th></tr>",
        others.len()
    );
    for (row, status, message) in others {
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
            escape(key),
            escape(&row.name),
            escape(status),
            escape(status),
            escape(&got)
        );
    }
    page.push_str("</table>\n");
}

/// The distinct failures, the most common first: the same expected and
/// got are one, shown once with who got it.
fn distinct_failures(page: &mut String, others: &[Missed], key: &str) {
    let mut groups: BTreeMap<(String, String), Vec<(&str, &str)>> = BTreeMap::new();
    for (row, status, message) in others {
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
                    escape(key),
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
        failure_body(page, members[0].1);
        page.push_str("</section>\n");
    }
}
