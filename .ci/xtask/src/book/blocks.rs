//! The generated parts of a page: its blocks (`<!-- generated: KIND
//! LESSON -->` … `<!-- end generated -->`) and its numbers (`<!-- n: NAME
//! -->…<!-- /n -->`), written anew from the lab.

use std::fmt::Write as _;

use lab_claims::{CLAIMS, Claim, LESSONS, Track};

use crate::book::lab::{Lab, claim_column};

/// The text with every generated part written anew.
pub fn fill(text: &str, lab: &Lab) -> Result<String, String> {
    let mut out = String::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if let Some(what) = line
            .trim()
            .strip_prefix("<!-- generated: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            out.push_str(line);
            out.push_str(&block(what, lab)?);
            let mut ended = false;
            for skipped in lines.by_ref() {
                if skipped.trim() == "<!-- end generated -->" {
                    out.push_str(skipped);
                    ended = true;
                    break;
                }
            }
            if !ended {
                return Err(format!(
                    "<!-- generated: {what} --> has no <!-- end generated -->"
                ));
            }
        } else if let Some(what) = line
            .trim()
            .strip_prefix("<!-- sample: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            out.push_str(line);
            out.push_str(&crate::book::samples::sample(what, &mut lines, lab)?);
        } else {
            out.push_str(&numbers(line, lab)?);
        }
    }
    Ok(out)
}

/// A line with each `<!-- n: NAME -->…<!-- /n -->` holding its number.
fn numbers(line: &str, lab: &Lab) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("<!-- n: ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "<!-- n: ".len()..];
        let (name, after) = after
            .split_once(" -->")
            .ok_or("a <!-- n: …  --> that does not close")?;
        let (_, after) = after
            .split_once("<!-- /n -->")
            .ok_or_else(|| format!("<!-- n: {name} --> has no <!-- /n -->"))?;
        let _ = write!(out, "<!-- n: {name} -->{}<!-- /n -->", lab.number(name)?);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// The text of one generated block.
fn block(what: &str, lab: &Lab) -> Result<String, String> {
    let (kind, lesson) = what.split_once(' ').unwrap_or((what, ""));
    let mut out = String::from("\n");
    match kind {
        "claims" => claims(&mut out, lesson, lab),
        "story" => story(&mut out, lesson, lab)?,
        "pitfalls" => pitfalls(&mut out, lesson, lab),
        "lessons" => lessons(&mut out),
        _ => return Err(format!("no generated block of kind {kind:?}")),
    }
    out.push('\n');
    Ok(out)
}

/// `claims L4`: a table of the lesson's claims, each with its points, its
/// statement and its tests on each track.
fn claims(out: &mut String, lesson: &str, lab: &Lab) {
    out.push_str("| Claim | Points | What the lab shows | Tests (`tests/lab/`) |\n");
    out.push_str("| --- | --- | --- | --- |\n");
    for claim in CLAIMS.iter().filter(|claim| claim.lesson().id == lesson) {
        let mut tests = Vec::new();
        for track in Track::ALL {
            let functions = lab.functions(claim, track);
            if functions.is_empty() {
                continue;
            }
            let shown: Vec<String> = functions.iter().map(|name| format!("`{name}`")).collect();
            tests.push(match track {
                Track::Sqlite => shown.join(", "),
                _ => format!("on {}: {}", track.name(), shown.join(", ")),
            });
        }
        let only = match claim.tracks {
            [Track::Postgres] => " *PostgreSQL*",
            [Track::Etcd] => " *etcd*",
            [Track::PostgresSql] => " *PostgreSQL functions*",
            _ => "",
        };
        let _ = writeln!(
            out,
            "| {}{only} | {} | {} | {} |",
            claim.id,
            claim.points,
            claim.text.replace('|', "\\|"),
            tests.join("; ")
        );
    }
}

/// `story L4`: the lesson's committed transcript, as a block of text.
fn story(out: &mut String, lesson: &str, lab: &Lab) -> Result<(), String> {
    let lines = lab
        .stories
        .get(lesson)
        .ok_or_else(|| format!("no committed transcript starts with {lesson}"))?;
    out.push_str("```text\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("```\n");
    Ok(())
}

/// `pitfalls L4`: each committed mutant that loses a claim of the lesson,
/// and the claims it loses.
fn pitfalls(out: &mut String, lesson: &str, lab: &Lab) {
    let ids: Vec<&str> = CLAIMS
        .iter()
        .filter(|claim| claim.lesson().id == lesson)
        .map(|claim| claim.id)
        .collect();
    let mut any = false;
    for (class, rows) in &lab.classes {
        for (submission, lost) in rows {
            if !submission.starts_with("mutant") {
                continue;
            }
            let here: Vec<String> = lost
                .iter()
                .filter_map(|column| claim_column(column))
                .filter(|(id, _)| ids.contains(id))
                .map(|(id, track)| match track {
                    // A claim checked on one track only needs no name.
                    Some(track)
                        if !lab_claims::claim(id).is_some_and(|claim| claim.tracks == [track]) =>
                    {
                        format!("{id} on {}", track.name())
                    }
                    _ => id.to_owned(),
                })
                .collect();
            if here.is_empty() {
                continue;
            }
            any = true;
            let _ = writeln!(
                out,
                "- `{submission}` (`staff/{class}/`): loses {}",
                here.join(", ")
            );
        }
    }
    if !any {
        out.push_str("- no committed mutant loses a claim of this lesson\n");
    }
}

/// `lessons`: every lesson, one line each, with its claims and points per
/// track, as each track's scorecard counts them: a claim checked on two
/// tracks is one line on each scorecard.
fn lessons(out: &mut String) {
    for lesson in LESSONS {
        let counts: Vec<String> = Track::ALL
            .into_iter()
            .filter_map(|track| lesson_on(lesson.id, track))
            .collect();
        let _ = writeln!(
            out,
            "- **{} {}**: {}",
            lesson.id,
            lesson.title,
            counts.join("; ")
        );
    }
}

/// A lesson's claims and points on a track (`SQLite 3 claims, 3 points`),
/// and which are not graded; `None` if it has no claim there.
fn lesson_on(lesson: &str, track: Track) -> Option<String> {
    let plural =
        |count: usize, what: &str| format!("{count} {what}{}", if count == 1 { "" } else { "s" });
    let claims: Vec<&Claim> = CLAIMS
        .iter()
        .filter(|claim| claim.lesson().id == lesson && claim.on(track))
        .collect();
    if claims.is_empty() {
        return None;
    }
    let points: u32 = claims.iter().map(|claim| claim.points).sum();
    let ungraded: Vec<&str> = claims
        .iter()
        .filter(|claim| claim.points == 0)
        .map(|claim| claim.id)
        .collect();
    let ungraded = if ungraded.is_empty() {
        String::new()
    } else {
        format!(" ({} not graded)", ungraded.join(", "))
    };
    Some(format!(
        "{} {}, {}{ungraded}",
        track.name(),
        plural(claims.len(), "claim"),
        plural(points as usize, "point")
    ))
}
