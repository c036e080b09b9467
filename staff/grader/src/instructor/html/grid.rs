//! One track's grid on the class page, made to be read at a glance on a
//! laptop's screen. A row per submission: its name, points, status and
//! flags stay in place at the left, and the status names every claim the
//! row did not pass (see `failing`). Beside them comes one summary column
//! per lesson, the points the row earned on it, narrow enough for all of
//! them to fit at 1280 px; the claims worth 0 points make a last group of
//! their own. A group opens into its claims, a column each, and closes
//! again, through a checkbox above the grid (or a click on the group's
//! head or on any row's summary cell, labels of that checkbox); CSS alone
//! reads the checkbox, so this works with JavaScript off, and a printed
//! page shows every claim. The class's pass rates sit at the foot.

use std::fmt::Write as _;
use std::ops::Range;

use super::failing::failing;
use super::text::{escape, percent, url_segment};
use super::{
    BY_POINTS, CLAIMS_FOLDER, Order, claim_key, claims_on, linked, outcome, rate, verdict,
};
use crate::instructor::report::{ON_HOLD, Row, TrackRow};
use lab_claims::{Claim, LESSONS, Track};

/// The key of the group of claims worth 0 points, in class names and ids;
/// a lesson's group's key is the lesson's id.
const ZERO: &str = "zero";

/// Columns of claims behind one summary column: a lesson's claims worth
/// points, or all the claims worth 0 points.
struct Group {
    /// The lesson's id (`L4`), or [`ZERO`]: its cells' classes are
    /// `sum-KEY` and `in-KEY`, its checkbox's class `open-KEY`.
    key: &'static str,
    /// What its heads say: `L4`, `0 pts`.
    label: &'static str,
    /// The lesson's title, or why these claims stand apart.
    title: &'static str,
    /// Its claims' places in `Columns::all`.
    claims: Range<usize>,
}

/// A track's columns of claims, and how the class did on each.
struct Columns {
    track: Track,
    /// The track's place among the graded tracks (in a row's `tracks`).
    at: usize,
    /// The track's points in all.
    total: u32,
    /// The claims worth points by lesson, then those worth 0 points.
    all: Vec<&'static Claim>,
    /// How many of `all` are worth points.
    scored: usize,
    /// The lessons with claims worth points, then the claims worth 0.
    groups: Vec<Group>,
    /// How many rows pass each claim of `all`.
    rates: Vec<usize>,
    /// The least rate of a claim worth points, if the rates differ.
    hardest: Option<usize>,
}

impl Columns {
    fn new(rows: &[&Row], track: Track, at: usize) -> Columns {
        let (scored, unscored) = claims_on(track);
        let mut groups: Vec<Group> = LESSONS
            .iter()
            .filter_map(|lesson| {
                let start = scored
                    .iter()
                    .position(|claim| claim.lesson().id == lesson.id)?;
                let count = scored
                    .iter()
                    .filter(|claim| claim.lesson().id == lesson.id)
                    .count();
                Some(Group {
                    key: lesson.id,
                    label: lesson.id,
                    title: lesson.title,
                    claims: start..start + count,
                })
            })
            .collect();
        let all: Vec<&Claim> = scored.iter().chain(&unscored).copied().collect();
        if !unscored.is_empty() {
            groups.push(Group {
                key: ZERO,
                label: "0 pts",
                title: "worth 0 points: in no total and no lesson's pass rate",
                claims: scored.len()..all.len(),
            });
        }
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
            all,
            scored: scored.len(),
            groups,
            rates,
            hardest,
        }
    }

    /// The group of the claim at `index` of `all`.
    fn group_of(&self, index: usize) -> &Group {
        self.groups
            .iter()
            .find(|group| group.claims.contains(&index))
            .unwrap_or(&self.groups[0])
    }

    /// Whether the claim at `index` of `all` is the hardest.
    fn is_hardest(&self, index: usize) -> bool {
        index < self.scored && Some(self.rates[index]) == self.hardest
    }

    /// The id of the checkbox that opens the group `key` (or `all`).
    fn toggle(&self, key: &str) -> String {
        format!("{}-open-{key}", self.track.key())
    }
}

/// The CSS that shows a group's claims while its checkbox is checked, and
/// marks its summary head open: rules for every lesson of the lab and for
/// the claims worth 0 points (the rules common to all are in `style.css`).
pub(super) fn toggle_rules() -> String {
    let mut rules = String::new();
    for key in LESSONS.iter().map(|lesson| lesson.id).chain([ZERO]) {
        let _ = writeln!(
            rules,
            ".open-{key}:checked ~ .scroll .in-{key} {{ display: table-cell; }}\n\
             .open-{key}:checked ~ .scroll th.sum-{key} {{ background: #d6e2f3; }}\n\
             .open-{key}:checked ~ .scroll th.sum-{key} .arrow::after {{ content: \"\\25C2\"; }}"
        );
    }
    rules
}

/// One track's grid, its checkboxes above it.
pub(super) fn grid(page: &mut String, rows: &[&Row], track: Track, at: usize, order: Order) {
    let columns = Columns::new(rows, track, at);
    let sort_note = match order {
        Order::Name => "sorted by name",
        Order::Points => "sorted by points",
    };
    let _ = writeln!(
        page,
        "<div class=\"track\">\n<h2>{}</h2>",
        escape(track.name())
    );
    toggles(page, &columns);
    let _ = writeln!(
        page,
        "<div class=\"scroll\">\n<table class=\"grid\" data-track=\"{}\" \
         aria-label=\"{} claims, {sort_note}\">",
        track.key(),
        escape(track.name()),
    );
    page.push_str("<thead>\n");
    group_heads(page, &columns);
    claim_heads(page, &columns);
    page.push_str("</thead>\n<tbody>\n");
    for row in rows {
        body_row(page, &columns, row);
    }
    page.push_str("</tbody>\n<tfoot>\n");
    rates_row(page, &columns, rows.len());
    page.push_str("</tfoot>\n</table>\n</div>\n</div>\n");
}

/// The checkboxes that open the groups, and one that opens them all: they
/// come before the grid's `.scroll`, as its siblings, for the CSS rules of
/// [`toggle_rules`] to reach it.
fn toggles(page: &mut String, columns: &Columns) {
    page.push_str("<span class=\"toggles\">Show the claims of</span>\n");
    for group in &columns.groups {
        let id = columns.toggle(group.key);
        let _ = writeln!(
            page,
            "<input type=\"checkbox\" class=\"open open-{key}\" id=\"{id}\" data-group=\"{key}\">\
             <label for=\"{id}\" title=\"{}\">{}</label>",
            escape(group.title),
            escape(group.label),
            key = group.key,
        );
    }
    let id = columns.toggle("all");
    let _ = writeln!(
        page,
        "<input type=\"checkbox\" class=\"open open-all\" id=\"{id}\">\
         <label for=\"{id}\">every lesson</label>"
    );
}

/// The head's first row: the fixed columns' heads (two rows high), each
/// group's summary head, which opens it, then a head over each group's
/// claims.
fn group_heads(page: &mut String, columns: &Columns) {
    page.push_str(
        "<tr><th class=\"fixed c-name\" rowspan=\"2\">\
         <a href=\"index.html\" data-sort=\"name\">submission</a></th>",
    );
    let _ = write!(
        page,
        "<th class=\"fixed c-points\" rowspan=\"2\">\
         <a href=\"{BY_POINTS}\" data-sort=\"points\">points</a></th>\
         <th class=\"fixed c-status\" rowspan=\"2\">status: the claims not passed</th>\
         <th class=\"fixed c-flags\" rowspan=\"2\" title=\"lines the review held\">flags</th>"
    );
    for group in &columns.groups {
        let _ = write!(
            page,
            "<th class=\"sum sum-{key}\" data-group=\"{key}\" title=\"{}\">\
             <label for=\"{}\">{}</label></th>",
            escape(group.title),
            columns.toggle(group.key),
            escape(group.label),
            key = group.key,
        );
    }
    for group in &columns.groups {
        let _ = write!(
            page,
            "<th class=\"claim in-{} first\" colspan=\"{}\" title=\"{}\">{}</th>",
            group.key,
            group.claims.len(),
            escape(group.title),
            escape(group.label)
        );
    }
    page.push_str("</tr>\n");
}

/// The head's second row: under each summary head, its open or closed
/// mark; a head per claim, which sorts by it (or leads to its page),
/// labelled with its number in its lesson.
fn claim_heads(page: &mut String, columns: &Columns) {
    page.push_str("<tr class=\"claims\">");
    for group in &columns.groups {
        let _ = write!(
            page,
            "<th class=\"sum sum-{}\"><label for=\"{}\" title=\"open or close {}\">\
             <span class=\"arrow\"></span></label></th>",
            group.key,
            columns.toggle(group.key),
            escape(group.label)
        );
    }
    for (index, claim) in columns.all.iter().enumerate() {
        let group = columns.group_of(index);
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
            "<th class=\"claim in-{}{}\" title=\"{}: {} ({} points)\"><a href=\"{CLAIMS_FOLDER}/{}.html\" \
             data-sort=\"{}\">{}</a></th>",
            group.key,
            if group.claims.start == index {
                " first"
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

/// A submission's row: the cells that stay in place, a summary cell per
/// group and a cell per claim; or, where nothing ran, one cell that says
/// why across the summaries (and one across each group's claims).
fn body_row(page: &mut String, columns: &Columns, row: &Row) {
    let link = url_segment(&row.name);
    let word = outcome(row);
    let nothing_ran = word != "pass"
        && !word.is_empty()
        && columns
            .all
            .iter()
            .all(|claim| verdict(row, columns.at, claim.id) == "error");
    row_start(page, columns, row, &link, nothing_ran);
    if nothing_ran {
        // A compile error (or a build that timed out): one cell that
        // says so, leading to the compiler's words.
        let _ = write!(
            page,
            "<td class=\"nocompile\" colspan=\"{}\">\
             <a href=\"{link}/index.html#error\">{}</a></td>",
            columns.groups.len(),
            escape(word)
        );
        for group in &columns.groups {
            let _ = write!(
                page,
                "<td class=\"claim in-{} error first\" colspan=\"{}\" title=\"no result\">?</td>",
                group.key,
                group.claims.len()
            );
        }
    } else {
        for group in &columns.groups {
            summary_cell(page, columns, row, group);
        }
        for index in 0..columns.all.len() {
            claim_cell(page, columns, row, &link, index);
        }
    }
    page.push_str("</tr>\n");
}

/// A row's start: its `<tr>`, with its status and points, and the cells
/// that stay in place: its name, points, status (with the claims it did
/// not pass, unless nothing ran) and flags.
fn row_start(page: &mut String, columns: &Columns, row: &Row, link: &str, nothing_ran: bool) {
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
    let (listed, text) = if nothing_ran || status == "pass" {
        (String::new(), String::new())
    } else {
        failing(row, columns.track, columns.at, link)
    };
    let (listed, text) = if text.is_empty() {
        (String::new(), String::new())
    } else {
        (format!(": {listed}"), format!(": {text}"))
    };
    let _ = write!(
        page,
        "<tr class=\"status-{class}\" data-submission=\"{}\" data-points=\"{earned}\">\
         <td class=\"fixed c-name\" title=\"{}\"><a href=\"{link}/index.html\">{}</a></td>\
         <td class=\"fixed c-points\" data-points=\"{earned}\">{shown}</td>\
         <td class=\"fixed c-status\" title=\"{}\">{}{listed}{}</td>\
         <td class=\"fixed c-flags\">{}</td>",
        escape(&row.name),
        escape(&row.name),
        escape(&row.name),
        escape(&format!("{status}{text}{}", linked(row))),
        escape(status),
        escape(linked(row)),
        match row.flags {
            0 => "0".to_owned(),
            flags => format!("<a href=\"{link}/index.html#flags\">{flags}</a>"),
        }
    );
}

/// A row's summary cell for a group: the points it earned of the lesson's
/// (of the claims worth 0 points, how many it passed), marked by its worst
/// verdict; a label of the group's checkbox, so a click opens the group.
fn summary_cell(page: &mut String, columns: &Columns, row: &Row, group: &Group) {
    let claims = &columns.all[group.claims.clone()];
    let track = row.tracks.get(columns.at);
    let verdicts: Vec<String> = claims
        .iter()
        .map(|claim| verdict(row, columns.at, claim.id))
        .collect();
    let missed: Vec<&str> = claims
        .iter()
        .zip(&verdicts)
        .filter(|(_, verdict)| *verdict != "pass")
        .map(|(claim, _)| claim.id)
        .collect();
    let (earned, of, unit) = if group.key == ZERO {
        (claims.len() - missed.len(), claims.len(), "claims pass")
    } else {
        let earned = track.map_or(0, |track| {
            track
                .claims
                .iter()
                .filter(|(id, _, _)| claims.iter().any(|claim| claim.id == id))
                .map(|(_, _, earned)| *earned as usize)
                .sum()
        });
        let of = claims.iter().map(|claim| claim.points as usize).sum();
        (earned, of, "points")
    };
    let (class, mark) = if verdicts.iter().any(|verdict| verdict == "fail") {
        ("fail", "&#10007;")
    } else if missed.is_empty() {
        ("pass", "&#10003;")
    } else {
        ("error", "?")
    };
    let _ = write!(
        page,
        "<td class=\"sum sum-{key} {class}{}\" data-group=\"{key}\"><label for=\"{}\" \
         title=\"{}, {}: {earned} of {of} {unit}{}; click for its claims\">{mark} {earned}/{of}</label></td>",
        if group.key == ZERO { " unscored" } else { "" },
        columns.toggle(group.key),
        escape(&row.name),
        escape(group.label),
        if missed.is_empty() {
            String::new()
        } else {
            format!("; not passed: {}", missed.join(" "))
        },
        key = group.key,
    );
}

/// A row's cell for the claim at `index`: its verdict, leading to it on
/// the submission's page.
fn claim_cell(page: &mut String, columns: &Columns, row: &Row, link: &str, index: usize) {
    let claim = columns.all[index];
    let group = columns.group_of(index);
    let status = verdict(row, columns.at, claim.id);
    let mark = match status.as_str() {
        "pass" => "&#10003;",
        "fail" => "&#10007;",
        _ => "?",
    };
    let anchor = if status == "pass" { "claim" } else { "fail" };
    let mut class = format!("claim in-{} {status}", group.key);
    if claim.points == 0 {
        class.push_str(" unscored");
    }
    if group.claims.start == index {
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

/// The foot: under each summary, its lesson's pass rate over its claims
/// worth points; under each claim, its own, the hardest outlined (and its
/// lesson's); the label names the hardest.
fn rates_row(page: &mut String, columns: &Columns, rows: usize) {
    let hardest: Vec<&str> = (0..columns.scored)
        .filter(|index| columns.is_hardest(*index))
        .map(|index| columns.all[index].id)
        .collect();
    let least = match (hardest.is_empty(), columns.hardest) {
        (false, Some(passed)) => format!(
            "; the class passes {} least ({})",
            hardest.join(" "),
            percent(passed, rows)
        ),
        _ => String::new(),
    };
    let _ = write!(
        page,
        "<tr><th class=\"fixed c-label\" colspan=\"4\">pass rate{}</th>",
        escape(&least)
    );
    for group in &columns.groups {
        if group.key == ZERO {
            let _ = write!(
                page,
                "<td class=\"rate sum sum-{ZERO} unscored\" data-group=\"{ZERO}\" \
                 title=\"worth 0 points: in no lesson's pass rate\">-</td>"
            );
            continue;
        }
        let passed: usize = columns.rates[group.claims.clone()].iter().sum();
        let holds_hardest = group.claims.clone().any(|index| columns.is_hardest(index));
        let _ = write!(
            page,
            "<td class=\"rate sum sum-{key}{}\" data-group=\"{key}\" data-lesson=\"{key}\" \
             title=\"{key}: {passed} of {} verdicts pass\">{}</td>",
            if holds_hardest { " hardest" } else { "" },
            group.claims.len() * rows,
            percent(passed, group.claims.len() * rows),
            key = group.key,
        );
    }
    for (index, (claim, passed)) in columns.all.iter().zip(&columns.rates).enumerate() {
        let group = columns.group_of(index);
        let mut class = format!("rate claim in-{}", group.key);
        if claim.points == 0 {
            class.push_str(" unscored");
        } else if columns.is_hardest(index) {
            class.push_str(" hardest");
        }
        if group.claims.start == index {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A row on SQLite: `verdict` for every claim, `short` its result.
    fn row(name: &str, verdict: &str, short: &str) -> Row {
        let (scored, unscored) = claims_on(Track::Sqlite);
        let claims = scored
            .iter()
            .chain(&unscored)
            .map(|claim| {
                let earned = if verdict == "pass" { claim.points } else { 0 };
                (claim.id.to_owned(), verdict.to_owned(), earned)
            })
            .collect();
        Row {
            name: name.to_owned(),
            status: "fail".to_owned(),
            short: short.to_owned(),
            flags: 0,
            held: false,
            submitted: vec!["sqlite".to_owned()],
            tracks: vec![TrackRow {
                track: "sqlite".to_owned(),
                claims,
            }],
        }
    }

    /// A row's cells: each one's class and colspan.
    fn cells(tr: &str) -> Vec<(String, usize)> {
        let attribute = |cell: &str, name: &str| {
            let open = &cell[..cell.find('>').unwrap_or(cell.len())];
            open.split_once(&format!("{name}=\""))
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(value, _)| value.to_owned())
        };
        tr.split("<t")
            .skip(1)
            .filter(|cell| cell.starts_with('d') || cell.starts_with('h'))
            .map(|cell| {
                let span = attribute(cell, "colspan").map_or(1, |span| span.parse().unwrap());
                (attribute(cell, "class").unwrap_or_default(), span)
            })
            .collect()
    }

    #[test]
    fn every_row_has_a_summary_per_lesson_and_a_column_per_claim() {
        let rows = [
            row("all-pass", "pass", "pass"),
            row("all-fail", "fail", "fail: L1.1"),
            row("broken", "error", "does not compile"),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let mut page = String::new();
        grid(&mut page, &refs, Track::Sqlite, 0, Order::Name);
        let columns = Columns::new(&refs, Track::Sqlite, 0);
        let body = &page[page.find("<tbody>").unwrap()..];
        let trs: Vec<&str> = body.split("<tr").skip(1).collect();
        assert_eq!(trs.len(), rows.len() + 1, "the rows and the foot");
        for tr in trs {
            let cells = cells(tr);
            let always: usize = cells
                .iter()
                .filter(|(class, _)| !class.contains("claim"))
                .map(|(_, span)| span)
                .sum();
            assert_eq!(always, 4 + columns.groups.len(), "{tr}");
            for group in &columns.groups {
                let shown: usize = cells
                    .iter()
                    .filter(|(class, _)| {
                        class.contains(&format!("in-{} ", group.key))
                            || class.ends_with(&format!("in-{}", group.key))
                    })
                    .map(|(_, span)| span)
                    .sum();
                assert_eq!(shown, group.claims.len(), "{} in {tr}", group.key);
            }
        }
        assert!(page.contains(&format!(
            "<td class=\"nocompile\" colspan=\"{}\"><a href=\"broken/index.html#error\">does not compile</a>",
            columns.groups.len()
        )));
        // Counted from the catalogue: a claim added there must not break it.
        assert!(page.contains(&format!("all {} claims</a>", columns.all.len())));
        // Every label opens a checkbox on the page, and every group has a rule.
        let rules = toggle_rules();
        for (_, rest) in page
            .match_indices("<label for=\"")
            .map(|(at, _)| page.split_at(at + 12))
        {
            let id = &rest[..rest.find('"').unwrap()];
            assert!(
                page.contains(&format!(
                    "<input type=\"checkbox\" class=\"open open-{}\" id=\"{id}\"",
                    id.rsplit('-').next().unwrap()
                )),
                "{id}"
            );
        }
        for group in &columns.groups {
            assert!(rules.contains(&format!(
                ".open-{key}:checked ~ .scroll .in-{key} ",
                key = group.key
            )));
        }
    }
}
