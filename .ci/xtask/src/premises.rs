//! `cargo xtask premises DIR...`: proves that no hint says what its step
//! does not show. Every failure a graded run printed (a class's
//! `results.json` files under a grader's output folder, or cargo-mutants'
//! logs, `*.log`, under its output folder) is read back as its step,
//! expected, got and hint id, and the hint's premise
//! (`staff/claims/src/hints/premise.rs`) must hold for that step: the facts
//! `Facts::read` reads from the three lines. A premise covers every level
//! of its hint (a level that names a cause or a fix takes it for granted
//! too), so each failure is three (failure, level) pairs. Prints how many
//! failures were checked, by source, and every false premise.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use lab_claims::facts::Facts;
use lab_claims::hints::premise_holds;

/// One failure block of a printed failure: its hint's id and its step.
struct Shown {
    hint: String,
    step: String,
    expected: String,
    got: String,
}

/// Checks every failure under `dirs` (folders of the lab's checkout, or
/// absolute). Exits 1 on a false premise, 2 when a folder or a file cannot
/// be read: a folder CI names must exist.
pub fn run(dirs: &[String]) -> ExitCode {
    if dirs.is_empty() {
        eprintln!("usage: cargo xtask premises DIR...");
        return ExitCode::from(2);
    }
    let checkout = crate::checkout();
    let (mut checked, mut false_premises) = (0usize, Vec::new());
    for dir in dirs {
        let shown = match gather(&checkout.join(dir)) {
            Ok(shown) => shown,
            Err(error) => {
                eprintln!("xtask premises: {dir}: {error}");
                return ExitCode::from(2);
            }
        };
        eprintln!("{dir}: {} failures with a hint", shown.len());
        for failure in shown {
            checked += 1;
            let facts = Facts::read(&failure.step, &failure.expected, &failure.got);
            if !premise_holds(&failure.hint, &facts) {
                false_premises.push(format!(
                    "[hint {}] on step {:?}\n    expected: {}\n    got:      {}",
                    failure.hint, failure.step, failure.expected, failure.got
                ));
            }
        }
    }
    println!(
        "{checked} shown hints checked against their steps: {} (failure, level) pairs, {} false",
        checked * 3,
        false_premises.len() * 3
    );
    if false_premises.is_empty() {
        return ExitCode::SUCCESS;
    }
    println!(
        "{} shown where the step does not show their premise:",
        false_premises.len()
    );
    for failure in &false_premises {
        println!("  {failure}");
    }
    ExitCode::FAILURE
}

/// The failures with a hint that the runs under `dir` printed.
fn gather(dir: &Path) -> Result<Vec<Shown>, String> {
    let mut texts = Vec::new();
    for path in crate::files_under(dir)? {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if name == "results.json" {
            let text = fs::read_to_string(&path).map_err(|error| error.to_string())?;
            let results: serde_json::Value = serde_json::from_str(&text)
                .map_err(|error| format!("{}: {error}", path.display()))?;
            for test in results["tests"].as_array().into_iter().flatten() {
                texts.push(test["message"].as_str().unwrap_or_default().to_owned());
            }
        } else if name.ends_with(".log") {
            let bytes = fs::read(&path).map_err(|error| error.to_string())?;
            texts.push(String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    Ok(texts.iter().flat_map(|text| failures(text)).collect())
}

/// The fields a failure block prints, each `  name: value` (the value of
/// `step`, `expected` and `got` running on over lines indented further).
const FIELDS: &[&str] = &[
    "step", "expected", "got", "happened", "open", "hint", "more", "note", "alone", "next",
];

/// The failure blocks of a printed text that carry a hint id (`[hint ID]`
/// on their `more:` line), an expected and a got.
fn failures(text: &str) -> Vec<Shown> {
    let mut blocks: Vec<Vec<(String, String)>> = Vec::new();
    let mut open = false;
    let mut running: Option<String> = None;
    for line in text.lines() {
        if let Some((name, value)) = field(line) {
            if name == "step" {
                blocks.push(Vec::new());
                open = true;
            }
            if open {
                if let Some(block) = blocks.last_mut() {
                    block.push((name.to_owned(), value.trim().to_owned()));
                }
                running = Some(name.to_owned());
            }
            continue;
        }
        let runs_on = matches!(running.as_deref(), Some("step" | "expected" | "got"));
        if open && runs_on && line.starts_with("   ") {
            if let Some((_, value)) = blocks.last_mut().and_then(|block| block.last_mut()) {
                value.push('\n');
                value.push_str(line.trim());
            }
        } else {
            running = None;
        }
    }
    blocks.iter().filter_map(|block| shown(block)).collect()
}

/// `  name: value` for one of [`FIELDS`].
fn field(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("  ")?;
    let (name, value) = rest.split_once(':')?;
    FIELDS.contains(&name).then_some((name, value))
}

/// A block as a failure with a hint, if it is one. The last value of a
/// field a block prints twice counts, as a map would keep it.
fn shown(block: &[(String, String)]) -> Option<Shown> {
    let get = |name: &str| {
        block
            .iter()
            .rev()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.clone())
    };
    let more = get("more").unwrap_or_default();
    // The first `[hint ID]` with an id: a non-empty run without `]`.
    let hint = more.match_indices("[hint ").find_map(|(at, open)| {
        let rest = &more[at + open.len()..];
        let id = &rest[..rest.find(']')?];
        (!id.is_empty() && !id.contains('[')).then_some(id)
    })?;
    Some(Shown {
        hint: hint.to_owned(),
        step: get("step")?,
        expected: get("expected")?,
        got: get("got")?,
    })
}

#[cfg(test)]
mod tests {
    use super::failures;

    #[test]
    fn a_block_with_a_hint_is_read_with_its_continued_lines() {
        let text = "\
noise
  step:     two requests at once
     and then some
  expected: applied
  got:      contention
     on the second
  hint:     a question
  more:     cargo grade --hint l3.2   [hint contention-not-refused]
  step:     another, without a hint
  expected: x
  got:      y
";
        let found = failures(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hint, "contention-not-refused");
        assert_eq!(found[0].step, "two requests at once\nand then some");
        assert_eq!(found[0].got, "contention\non the second");
    }

    #[test]
    fn an_empty_hint_id_is_no_hint() {
        let text = "  step: s\n  expected: e\n  got: g\n  more: x [hint ] y [hint real-id]\n";
        let found = failures(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hint, "real-id");
    }
}
