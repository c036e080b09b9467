//! A failure's message as the pages show it: the lines before its fields,
//! then its fields (`step`, `expected`, `got`, …) as a list.

use std::fmt::Write as _;

use serde_json::Value;

use super::text::escape;
use lab_claims::Track;

/// A failure message's parts: the lines before its fields, and its fields
/// (`step`, `expected`, `got`, `open`, `hint`, `more`), each with the
/// lines indented under it.
pub(super) fn fields(message: &str) -> (Vec<&str>, Vec<(&str, String)>) {
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
pub(super) fn test_of<'a>(results: &'a Value, track: Track, id: &str) -> Option<&'a Value> {
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

/// A failure's message: its first lines, then its fields.
pub(super) fn failure_body(page: &mut String, message: &str) {
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
}
