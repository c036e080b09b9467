//! `index.html`, the class report: one self-contained page (its style
//! inline; no script, font or image to fetch) with a grid of submissions by
//! claims, grouped by lesson, per graded track. Each claim's and each
//! lesson's class pass rate closes the grid, and the claim the class passes
//! least is marked, so it stands out. Per submission: its points, status,
//! the lines the review held and a link to its `results.json`.
//!
//! The page holds no timing and no date: the same class gives the same page.

use std::fmt::Write as _;

use crate::claims::{CLAIMS, LESSONS, Track};
use crate::report::Row;
use crate::score::tracks;

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #c8c8c8; padding: 2px 6px; text-align: center; white-space: nowrap; }
th.name, td.name { text-align: left; white-space: nowrap; }
td.pass { background: #bfe8c2; } td.fail { background: #f4b9b2; }
td.error { background: #f7dd9c; }
td.rate { font-size: 0.85em; } td.hardest { outline: 3px solid #b3261e; font-weight: bold; }
tr.status-pass td.status { color: #1e6b27; } tr.status-fail td.status { color: #a3231a; }
tr.status-error td.status { color: #8a5a00; }
p.sandbox-off { background: #f4b9b2; padding: 0.5em; }
.legend span { padding: 0 0.5em; margin-right: 0.5em; }
";

/// The class report.
pub fn class_report(rows: &[Row], sandbox: bool) -> String {
    let mut page = String::new();
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str("<title>fencing-lab: class report</title>\n");
    let _ = writeln!(page, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(page, "<h1>Class report: {} submissions</h1>", rows.len());
    if sandbox {
        page.push_str(
            "<p class=\"sandbox-on\">Every build and test run went through the sandbox.</p>\n",
        );
    } else {
        page.push_str(
            "<p class=\"sandbox-off\">Graded WITHOUT the sandbox (--no-sandbox): the code under \
             test could read the reference and other submissions.</p>\n",
        );
    }
    page.push_str(
        "<p class=\"legend\"><span style=\"background:#bfe8c2\">&#10003; pass</span>\
         <span style=\"background:#f4b9b2\">&#10007; fail</span>\
         <span style=\"background:#f7dd9c\">? no result</span> \
         the outlined rate is the claim the class passes least.</p>\n",
    );
    for (at, &track) in tracks().iter().enumerate() {
        grid(&mut page, rows, track, at);
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// One track's grid.
fn grid(page: &mut String, rows: &[Row], track: Track, at: usize) {
    let claims: Vec<&crate::claims::Claim> =
        CLAIMS.iter().filter(|claim| claim.on(track)).collect();
    let lessons: Vec<(&str, &str, usize)> = LESSONS
        .iter()
        .map(|lesson| {
            let count = claims
                .iter()
                .filter(|claim| claim.lesson().id == lesson.id)
                .count();
            (lesson.id, lesson.title, count)
        })
        .filter(|(_, _, count)| *count > 0)
        .collect();
    let cell = |row: &Row, id: &str| -> Option<String> {
        row.tracks
            .get(at)
            .and_then(|track| track.claims.iter().find(|(claim, _, _)| claim == id))
            .map(|(_, status, _)| status.clone())
    };
    // Each claim's pass rate over the class.
    let rates: Vec<(usize, usize)> = claims
        .iter()
        .map(|claim| {
            let passed = rows
                .iter()
                .filter(|row| cell(row, claim.id).as_deref() == Some("pass"))
                .count();
            (passed, rows.len())
        })
        .collect();
    let hardest = rates
        .iter()
        .zip(&claims)
        .filter(|(_, claim)| claim.points > 0)
        .map(|((passed, _), _)| *passed)
        .min();

    let _ = writeln!(
        page,
        "<h2>{}</h2>\n<table class=\"grid\" data-track=\"{}\">",
        escape(track.name()),
        track.key()
    );
    page.push_str("<thead>\n<tr><th class=\"name\" rowspan=\"2\">submission</th>");
    for (id, title, count) in &lessons {
        let _ = write!(
            page,
            "<th colspan=\"{count}\" title=\"{}\">{}</th>",
            escape(title),
            escape(id)
        );
    }
    page.push_str(
        "<th rowspan=\"2\">points</th><th rowspan=\"2\">status</th>\
         <th rowspan=\"2\">flags</th><th rowspan=\"2\">results</th></tr>\n<tr>",
    );
    for claim in &claims {
        let _ = write!(
            page,
            "<th title=\"{}\">{}</th>",
            escape(claim.text),
            escape(claim.id)
        );
    }
    page.push_str("</tr>\n</thead>\n<tbody>\n");
    let total = crate::claims::total_points_on(track);
    for row in rows {
        let _ = write!(
            page,
            "<tr class=\"status-{}\" data-submission=\"{}\"><td class=\"name\">{}</td>",
            escape(&row.status),
            escape(&row.name),
            escape(&row.name)
        );
        for claim in &claims {
            let status = cell(row, claim.id).unwrap_or_else(|| "error".to_owned());
            let mark = match status.as_str() {
                "pass" => "&#10003;",
                "fail" => "&#10007;",
                _ => "?",
            };
            let _ = write!(
                page,
                "<td class=\"{}\" data-claim=\"{}\" title=\"{} {}: {}\">{mark}</td>",
                escape(&status),
                escape(claim.id),
                escape(&row.name),
                escape(claim.id),
                escape(&status)
            );
        }
        let earned = row.tracks.get(at).map_or(0, |track| track.earned());
        let points = if row.held {
            format!("{} ({earned}/{total})", crate::report::ON_HOLD)
        } else {
            format!("{earned}/{total}")
        };
        let _ = writeln!(
            page,
            "<td class=\"points\">{points}</td><td class=\"status\">{}</td>\
             <td class=\"flags\">{}</td>\
             <td><a href=\"{}/results.json\">results</a></td></tr>",
            escape(&row.short),
            row.flags,
            escape(&url_segment(&row.name))
        );
    }
    page.push_str("</tbody>\n<tfoot>\n<tr><th class=\"name\">claim pass rate</th>");
    for ((passed, of), claim) in rates.iter().zip(&claims) {
        let class = if Some(*passed) == hardest && claim.points > 0 {
            "rate hardest"
        } else {
            "rate"
        };
        let _ = write!(
            page,
            "<td class=\"{class}\" data-claim=\"{}\">{}</td>",
            escape(claim.id),
            percent(*passed, *of)
        );
    }
    page.push_str("<td colspan=\"4\"></td></tr>\n<tr><th class=\"name\">lesson pass rate</th>");
    for (id, _, count) in &lessons {
        let (passed, of) = claims
            .iter()
            .zip(&rates)
            .filter(|(claim, _)| claim.lesson().id == *id)
            .fold((0, 0), |(p, o), (_, (passed, of))| (p + passed, o + of));
        let _ = write!(
            page,
            "<td class=\"rate\" colspan=\"{count}\" data-lesson=\"{}\">{}</td>",
            escape(id),
            percent(passed, of)
        );
    }
    page.push_str("<td colspan=\"4\"></td></tr>\n</tfoot>\n</table>\n");
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
