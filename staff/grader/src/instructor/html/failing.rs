//! The claims a row did not pass on one track, as its status cell lists
//! them: in the lessons' order and grouped by lesson (`L2.3,7 L4.11`), so
//! that every one is named on a line or two; each is a link to its failure
//! on the submission's page. A lesson that lost every claim it has reads
//! `all L4`, a row that lost every claim of the track `all 36 claims`.

use std::fmt::Write as _;

use super::text::escape;
use super::{claim_key, verdict};
use crate::instructor::report::Row;
use lab_claims::{CLAIMS, Claim, Track};

/// The claims of `track` that `row` did not pass (failed, or no result),
/// in the lessons' order: as HTML for the status cell, its links leading
/// to `LINK/index.html#fail-KEY`, and as plain text, every id in full. Each
/// link's `data-claims` holds the ids it stands for.
pub(super) fn failing(row: &Row, track: Track, at: usize, link: &str) -> (String, String) {
    let claims: Vec<&Claim> = CLAIMS.iter().filter(|claim| claim.on(track)).collect();
    let missed: Vec<&Claim> = claims
        .iter()
        .copied()
        .filter(|claim| verdict(row, at, claim.id) != "pass")
        .collect();
    let text = ids(&missed);
    let mut html = String::new();
    let Some(first) = missed.first() else {
        return (html, text);
    };
    let target = |claim: &Claim| format!("{link}/index.html#fail-{}", claim_key(track, claim.id));
    if missed.len() == claims.len() && claims.len() > 1 {
        let _ = write!(
            html,
            "<a href=\"{}\" data-claims=\"{}\" title=\"every claim of the track\">all {} claims</a>",
            escape(&target(first)),
            escape(&text),
            missed.len()
        );
        return (html, text);
    }
    let mut lessons: Vec<&str> = missed.iter().map(|claim| claim.lesson().id).collect();
    lessons.dedup();
    for lesson in lessons {
        let of_lesson = claims.iter().filter(|claim| claim.lesson().id == lesson);
        let lost: Vec<&Claim> = missed
            .iter()
            .copied()
            .filter(|claim| claim.lesson().id == lesson)
            .collect();
        if !html.is_empty() {
            html.push(' ');
        }
        if lost.len() > 1 && lost.len() == of_lesson.count() {
            let _ = write!(
                html,
                "<a href=\"{}\" data-claims=\"{}\" title=\"every claim of {lesson}: {}\">all {lesson}</a>",
                escape(&target(lost[0])),
                escape(&ids(&lost)),
                escape(&ids(&lost))
            );
            continue;
        }
        for (index, claim) in lost.iter().enumerate() {
            // After a lesson's first claim, its number alone: `L2.3,7`.
            let shown = if index == 0 {
                claim.id
            } else {
                html.push(',');
                claim
                    .id
                    .split_once('.')
                    .map_or(claim.id, |(_, number)| number)
            };
            let _ = write!(
                html,
                "<a href=\"{}\" data-claims=\"{}\" aria-label=\"{}\" title=\"{}: {}\">{}</a>",
                escape(&target(claim)),
                escape(claim.id),
                escape(claim.id),
                escape(claim.id),
                escape(claim.text),
                escape(shown)
            );
        }
    }
    (html, text)
}

/// The claims' ids, a space between them.
fn ids(claims: &[&Claim]) -> String {
    claims
        .iter()
        .map(|claim| claim.id)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructor::report::TrackRow;

    /// A row on SQLite that passes every claim but `lost`.
    fn row(lost: &[&str]) -> Row {
        let claims = CLAIMS
            .iter()
            .filter(|claim| claim.on(Track::Sqlite))
            .map(|claim| {
                let (status, earned) = if lost.contains(&claim.id) {
                    ("fail", 0)
                } else {
                    ("pass", claim.points)
                };
                (claim.id.to_owned(), status.to_owned(), earned)
            })
            .collect();
        Row {
            name: "a b".to_owned(),
            status: "fail".to_owned(),
            short: "fail".to_owned(),
            flags: 0,
            held: false,
            submitted: vec!["sqlite".to_owned()],
            tracks: vec![TrackRow {
                track: "sqlite".to_owned(),
                claims,
            }],
        }
    }

    /// The links' texts, one after the other.
    fn shown(html: &str) -> String {
        let mut out = String::new();
        let mut inside = false;
        for c in html.chars() {
            match c {
                '<' => inside = true,
                '>' => inside = false,
                _ if !inside => out.push(c),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn a_lessons_claims_share_its_id_and_each_links_to_its_failure() {
        let (html, text) = failing(&row(&["L4.11", "L2.3", "L2.7"]), Track::Sqlite, 0, "a%20b");
        assert_eq!(text, "L2.3 L2.7 L4.11");
        assert_eq!(shown(&html), "L2.3,7 L4.11");
        assert!(html.contains("<a href=\"a%20b/index.html#fail-L2.7\" data-claims=\"L2.7\""));
        assert!(html.contains("aria-label=\"L4.11\""));
        let (html, _) = failing(&row(&["L2.7"]), Track::Postgres, 0, "x");
        assert!(html.contains("x/index.html#fail-postgres-L2.7"), "{html}");
    }

    #[test]
    fn a_lesson_lost_whole_and_a_track_lost_whole_read_all() {
        let l1: Vec<&str> = CLAIMS
            .iter()
            .filter(|claim| claim.on(Track::Sqlite) && claim.lesson().id == "L1")
            .map(|claim| claim.id)
            .collect();
        let mut lost = l1.clone();
        lost.push("L5.2");
        let (html, _) = failing(&row(&lost), Track::Sqlite, 0, "n");
        assert_eq!(shown(&html), "all L1 L5.2");
        assert!(html.contains(&format!("data-claims=\"{}\"", l1.join(" "))));

        let every: Vec<&str> = CLAIMS
            .iter()
            .filter(|claim| claim.on(Track::Sqlite))
            .map(|claim| claim.id)
            .collect();
        let (html, text) = failing(&row(&every), Track::Sqlite, 0, "n");
        assert_eq!(shown(&html), format!("all {} claims", every.len()));
        assert_eq!(text, every.join(" "));
        assert_eq!(
            failing(&row(&[]), Track::Sqlite, 0, "n"),
            (String::new(), String::new())
        );
    }
}
