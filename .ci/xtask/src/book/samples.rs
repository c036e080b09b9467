//! A screen of the grader's shown in the book, `<!-- sample: CLASS
//! SUBMISSION -->` before a fenced block: its numbers come from that row of
//! the class's gradebook.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use lab_claims::{CLAIMS, Claim, Track};

use crate::book::lab::{Lab, claim_column};

/// The fenced block after `<!-- sample: CLASS SUBMISSION -->`, a screen
/// of the grader's shown in the book, with its numbers read off the
/// submission's row in `staff/CLASS/gradebook.csv`: the `Points X/Y` line,
/// and the watch mode's header and its bar per lesson (as `cargo grade
/// --watch` draws them; `.ci/watch-in-tmux` holds the book's bars to the
/// real screen). Every other line of the block is the text's own.
pub fn sample<'a>(
    what: &str,
    lines: &mut impl Iterator<Item = &'a str>,
    lab: &Lab,
) -> Result<String, String> {
    let (class, submission) = what
        .split_once(' ')
        .ok_or_else(|| format!("a sample is <!-- sample: CLASS SUBMISSION -->, not {what:?}"))?;
    let earned = gradebook_row(lab, class, submission)?;
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
        grader::learner::bar::lesson_line(
            &mut out,
            &lesson,
            (earned, total),
            (passing, claims.len()),
        );
    }
    out
}

/// The SQLite columns of `submission`'s row in the gradebook of `class`.
fn gradebook_row(
    lab: &Lab,
    class: &str,
    submission: &str,
) -> Result<BTreeMap<String, u32>, String> {
    let gradebook = lab
        .gradebooks
        .get(class)
        .ok_or_else(|| format!("no gradebook staff/{class}/gradebook.csv"))?;
    let row = gradebook
        .rows
        .iter()
        .find(|row| row.first().map(String::as_str) == Some(submission))
        .ok_or_else(|| format!("staff/{class}/gradebook.csv has no row {submission:?}"))?;
    Ok(gradebook
        .header
        .iter()
        .zip(row)
        .filter(|(column, _)| matches!(claim_column(column), Some((_, None))))
        .map(|(column, cell)| (column.clone(), cell.parse().unwrap_or(0)))
        .collect())
}
