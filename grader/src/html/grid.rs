//! One track's grid on the class page: a row per submission, whose name,
//! points, status and flags stay in place while a column per claim scrolls
//! beside them (grouped by lesson, those worth 0 points apart at the
//! right), and the class's pass rates at its foot.

use std::fmt::Write as _;

use super::text::{escape, percent, url_segment};
use super::{
    BY_POINTS, CLAIMS_FOLDER, Order, claim_key, claims_on, linked, outcome, rate, verdict,
};
use crate::report::{ON_HOLD, Row, TrackRow};
use lab_claims::{Claim, LESSONS, Track};

/// A track's columns of claims, and how the class did on each.
struct Columns {
    track: Track,
    /// The track's place among the graded tracks (in a row's `tracks`).
    at: usize,
    /// The track's points in all.
    total: u32,
    /// The claims worth points.
    scored: Vec<&'static Claim>,
    /// The claims worth 0 points, after them.
    unscored: Vec<&'static Claim>,
    /// Both, in the grid's order.
    all: Vec<&'static Claim>,
    /// Each lesson with claims worth points: its id, its title, how many.
    lessons: Vec<(&'static str, &'static str, usize)>,
    /// How many rows pass each claim of `all`.
    rates: Vec<usize>,
    /// The least rate of a claim worth points, if the rates differ.
    hardest: Option<usize>,
}

impl Columns {
    fn new(rows: &[&Row], track: Track, at: usize) -> Columns {
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
        Columns {
            track,
            at,
            total: lab_claims::total_points_on(track),
            scored,
            unscored,
            all,
            lessons,
            rates,
            hardest,
        }
    }

    /// Whether the claim at `index` of `all` starts a group, with a border
    /// on its left: the first claim, the first worth 0 points, a lesson's
    /// first.
    fn starts_group(&self, index: usize) -> bool {
        index == 0
            || index == self.scored.len()
            || self.all[index - 1].lesson().id != self.all[index].lesson().id
    }
}

/// One track's grid.
pub(super) fn grid(page: &mut String, rows: &[&Row], track: Track, at: usize, order: Order) {
    let columns = Columns::new(rows, track, at);
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
    page.push_str("<thead>\n");
    lesson_heads(page, &columns);
    claim_heads(page, &columns);
    page.push_str("</thead>\n<tbody>\n");
    for row in rows {
        body_row(page, &columns, row);
    }
    page.push_str("</tbody>\n<tfoot>\n");
    claim_rates(page, &columns, rows.len());
    lesson_rates(page, &columns, rows.len());
    page.push_str("</tfoot>\n</table>\n</div>\n");
}

/// The head's first row: the fixed columns' heads (two rows high), then a
/// head over each lesson's claims and one over the claims worth 0 points.
fn lesson_heads(page: &mut String, columns: &Columns) {
    page.push_str(
        "<tr><th class=\"fixed c-name\" rowspan=\"2\">\
         <a href=\"index.html\" data-sort=\"name\">submission</a></th>",
    );
    let _ = write!(
        page,
        "<th class=\"fixed c-points\" rowspan=\"2\">\
         <a href=\"{BY_POINTS}\" data-sort=\"points\">points</a></th>\
         <th class=\"fixed c-status\" rowspan=\"2\">status</th>\
         <th class=\"fixed c-flags\" rowspan=\"2\" title=\"lines the review held\">flags</th>"
    );
    for (id, title, count) in &columns.lessons {
        let _ = write!(
            page,
            "<th class=\"lesson\" colspan=\"{count}\" title=\"{}\">{}</th>",
            escape(title),
            escape(id)
        );
    }
    if !columns.unscored.is_empty() {
        let _ = write!(
            page,
            "<th class=\"lesson unscored-head\" colspan=\"{}\" \
             title=\"worth 0 points: in no total and no lesson's pass rate\">0 points</th>",
            columns.unscored.len()
        );
    }
    page.push_str("</tr>\n");
}

/// The head's second row: a head per claim, which sorts by it (or leads
/// to its page), labelled with its number in its lesson.
fn claim_heads(page: &mut String, columns: &Columns) {
    page.push_str("<tr class=\"claims\">");
    for (index, claim) in columns.all.iter().enumerate() {
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
            if columns.starts_group(index) {
                " class=\"first\""
            } else {
                ""
            },
            escape(claim.id),
            escape(claim.text),
            claim.points,
            url_segment(&claim_key(columns.track, claim.id)),
            escape(claim.id),
            escape(label)
        );
    }
    page.push_str("</tr>\n");
}

/// A submission's row: the cells that stay in place, then a cell per claim, or one cell
/// that says why nothing ran.
fn body_row(page: &mut String, columns: &Columns, row: &Row) {
    let link = url_segment(&row.name);
    row_start(page, columns, row, &link);
    let nothing_ran = columns
        .all
        .iter()
        .all(|claim| verdict(row, columns.at, claim.id) == "error");
    let word = outcome(row);
    if nothing_ran && word != "pass" && !word.is_empty() {
        // A compile error (or a build that timed out): one cell that
        // says so, leading to the compiler's words.
        let _ = write!(
            page,
            "<td class=\"nocompile first\" colspan=\"{}\">\
             <a href=\"{link}/index.html#error\">{}</a></td>",
            columns.all.len(),
            escape(word)
        );
    } else {
        for index in 0..columns.all.len() {
            claim_cell(page, columns, row, &link, index);
        }
    }
    page.push_str("</tr>\n");
}

/// A row's start: its `<tr>`, with its status and points, and the cells
/// that stay in place: its name, points, status and flags.
fn row_start(page: &mut String, columns: &Columns, row: &Row, link: &str) {
    let (total, earned) = (
        columns.total,
        row.tracks.get(columns.at).map_or(0, TrackRow::earned),
    );
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
        escape(&format!("{status}{}", linked(row))),
        match row.flags {
            0 => "0".to_owned(),
            flags => format!("<a href=\"{link}/index.html#flags\">{flags}</a>"),
        }
    );
}

/// A row's cell for the claim at `index`: its verdict, leading to it on
/// the submission's page.
fn claim_cell(page: &mut String, columns: &Columns, row: &Row, link: &str, index: usize) {
    let claim = columns.all[index];
    let status = verdict(row, columns.at, claim.id);
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
    if columns.starts_group(index) {
        class.push_str(" first");
    }
    let _ = write!(
        page,
        "<td class=\"{class}\" data-claim=\"{}\"><a href=\"{link}/index.html#{anchor}-{}\" \
         title=\"{} {}: {status}\">{mark}</a></td>",
        escape(claim.id),
        escape(&claim_key(columns.track, claim.id)),
        escape(&row.name),
        escape(claim.id),
    );
}

/// The foot's first row: each claim's pass rate, the hardest outlined.
fn claim_rates(page: &mut String, columns: &Columns, rows: usize) {
    page.push_str("<tr><th class=\"fixed c-label\" colspan=\"4\">claim pass rate</th>");
    for (index, (claim, passed)) in columns.all.iter().zip(&columns.rates).enumerate() {
        let mut class = "rate".to_owned();
        if claim.points == 0 {
            class.push_str(" unscored");
        } else if Some(*passed) == columns.hardest {
            class.push_str(" hardest");
        }
        if columns.starts_group(index) {
            class.push_str(" first");
        }
        let _ = write!(
            page,
            "<td class=\"{class}\" data-claim=\"{}\" title=\"{}: {passed} of {rows} pass{}\">{}</td>",
            escape(claim.id),
            escape(claim.id),
            if claim.points == 0 {
                "; worth 0 points, in no lesson's rate"
            } else {
                ""
            },
            percent(*passed, rows)
        );
    }
    page.push_str("</tr>\n");
}

/// The foot's second row: each lesson's pass rate, over its claims worth
/// points; the claims worth 0 points are not counted.
fn lesson_rates(page: &mut String, columns: &Columns, rows: usize) {
    page.push_str("<tr><th class=\"fixed c-label\" colspan=\"4\">lesson pass rate</th>");
    for (id, _, count) in &columns.lessons {
        let passed: usize = columns
            .scored
            .iter()
            .zip(&columns.rates)
            .filter(|(claim, _)| claim.lesson().id == *id)
            .map(|(_, passed)| passed)
            .sum();
        let _ = write!(
            page,
            "<td class=\"rate first\" colspan=\"{count}\" data-lesson=\"{}\">{}</td>",
            escape(id),
            percent(passed, count * rows)
        );
    }
    if !columns.unscored.is_empty() {
        let _ = write!(
            page,
            "<td class=\"rate unscored first\" colspan=\"{}\">not counted</td>",
            columns.unscored.len()
        );
    }
    page.push_str("</tr>\n");
}
