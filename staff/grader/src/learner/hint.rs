//! `cargo grade --hint L4.9 [LEVEL]`: the next level of the hint a failing
//! step asked, and `cargo grade --claims`: every claim's statement.
//!
//! A failure prints level 1 of its step's hint, a question. Asking here runs
//! the claim's tests on this checkout (no sandbox: it is the learner's own
//! code on the learner's own machine, as `cargo test` runs it), reads which
//! hint the first failing step chose (`[hint ID]` on its `more:` line), and
//! prints the next level: 2 the first time, 3 the time after, or the level
//! asked for. What was shown is kept in `target/grade-hints.txt`, one line
//! per claim and hint, which the watch mode's `h` reads and adds to too;
//! `--hint ID` names a hint directly.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use lab_claims::{CLAIMS, LESSONS, Track, hints};

/// Prints the next (or the asked) level of the hint for `what`: a claim's id
/// (`L4.9`), whose failing step is found by running its tests, or a hint's
/// id (`replay-applied-again`).
pub fn show(what: &str, level: Option<usize>, track: Track) -> Result<ExitCode, String> {
    let checkout = crate::engine::checkout::repository();
    let (claim, hint) = match lab_claims::claim(what) {
        Some(claim) => {
            if !claim.on(track) {
                return Err(format!(
                    "{} is not checked on {} (its tracks: {})",
                    claim.id,
                    track.name(),
                    claim
                        .tracks
                        .iter()
                        .map(|track| track.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            match failing_hint(&checkout, claim, track)? {
                Some(hint) => (Some(claim), hint),
                None => {
                    println!(
                        "{} {}\n  passes on {}: no hint to give",
                        claim.id,
                        claim.text,
                        track.name()
                    );
                    return Ok(ExitCode::SUCCESS);
                }
            }
        }
        None => match hints::by_id(what, track) {
            Some(hint) => (None, hint),
            None => {
                return Err(format!(
                    "no claim or hint {what:?}: a claim is named like L4.9, a hint as its failure's `more:` line names it"
                ));
            }
        },
    };
    let claim_id = claim.map(|claim| claim.id);
    let level = level.unwrap_or_else(|| (shown_level(claim_id, hint.id) + 1).clamp(2, 3));
    remember_level(claim_id, hint.id, level);
    let mut out = String::new();
    if let Some(claim) = claim {
        let _ = writeln!(out, "{} {}", claim.id, claim.text);
    }
    let _ = writeln!(out, "hint {}, level {level} of 3:", hint.id);
    let _ = writeln!(out, "  {}", hint.level(level));
    let again = claim.map_or(hint.id, |claim| claim.id);
    let flag = track.grade_flag();
    if level < 3 {
        let _ = writeln!(
            out,
            "the answer is level 3: `cargo grade --hint {again}{flag}` again, or with 3"
        );
    } else {
        let _ = writeln!(
            out,
            "that is the answer; `cargo test` says whether your code now agrees"
        );
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// Every claim's statement, lesson by lesson: what each test expects.
pub fn list_claims() -> ExitCode {
    let mut out = String::new();
    for lesson in LESSONS {
        let _ = writeln!(out, "{} {}", lesson.id, lesson.title);
        for claim in CLAIMS.iter().filter(|claim| claim.lesson() == lesson) {
            let tracks: Vec<&str> = claim.tracks.iter().map(|track| track.name()).collect();
            let _ = writeln!(
                out,
                "  {:<6}{} ({} point{}, {}; {})",
                claim.id,
                claim.text,
                claim.points,
                if claim.points == 1 { "" } else { "s" },
                tracks.join(", "),
                claim.files.join(", "),
            );
        }
    }
    print!("{out}");
    ExitCode::SUCCESS
}

/// Runs the claim's tests and reads the hint its first failing step chose.
fn failing_hint(
    checkout: &Path,
    claim: &lab_claims::Claim,
    track: Track,
) -> Result<Option<hints::Hint>, String> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(checkout)
        .args(["test", "--quiet", "--test", "lab"]);
    // The server tracks' Cargo features are named as their keys.
    if track != Track::Sqlite {
        command.args(["--features", track.key()]);
    }
    command
        .args(["--", &claim.test_prefix(), "--test-threads", "1"])
        .env("RUST_BACKTRACE", "0");
    eprintln!(
        "running {}'s tests on {} (cargo test {})",
        claim.id,
        track.name(),
        claim.test_prefix()
    );
    let output = command
        .output()
        .map_err(|error| format!("cannot run cargo test: {error}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !text.contains("test result:") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "the tests did not run (does the lab compile? `cargo test` says why):\n{}",
            stderr
                .lines()
                .skip(stderr.lines().count().saturating_sub(20))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    let failed_on = format!("failed on {}", track.name());
    let mut on_track = false;
    for line in text.lines() {
        if line.starts_with(&format!("claim {} ", claim.id)) {
            on_track = line.contains(&failed_on);
            if on_track && line.contains("is not implemented yet") {
                return Ok(hints::by_id("not-implemented", track));
            }
        }
        if let Some(id) = line
            .trim_start()
            .strip_prefix("more:")
            .and_then(|rest| rest.split("[hint ").nth(1))
            .and_then(|rest| rest.strip_suffix(']'))
        {
            if on_track {
                return Ok(hints::by_id(id, track));
            }
        }
    }
    if output.status.success() {
        Ok(None)
    } else {
        // A failure with no hint of its own (NOT CHECKED, a harness panic):
        // the claim's hint.
        Ok(Some(hints::for_claim(claim, track)))
    }
}

/// Where the levels shown are kept: the checkout's
/// `target/grade-hints.txt`, one line per claim and hint, shared by
/// `--hint` and the watch mode's `h`.
fn memory() -> PathBuf {
    crate::engine::checkout::repository()
        .join("target")
        .join("grade-hints.txt")
}

/// The line's key: the claim's id (`-` for a hint asked by its id) and the
/// hint's.
fn key(claim: Option<&str>, hint: &str) -> String {
    format!("{} {hint}", claim.unwrap_or("-"))
}

/// The highest level of `hint` shown for `claim`, by `--hint` or the watch
/// mode, 1 if none.
pub fn shown_level(claim: Option<&str>, hint: &str) -> usize {
    shown(&memory(), &key(claim, hint))
}

/// Notes that `level` of `hint` was shown for `claim`, so that `--hint` and
/// the watch mode go on from it.
pub fn remember_level(claim: Option<&str>, hint: &str, level: usize) {
    remember(&memory(), &key(claim, hint), level);
}

/// The highest level shown for `key`, 1 if none.
fn shown(memory: &Path, key: &str) -> usize {
    fs::read_to_string(memory)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.rsplit_once(' '))
        .filter(|(seen, _)| *seen == key)
        .filter_map(|(_, level)| level.parse().ok())
        .max()
        .unwrap_or(1)
}

/// Notes that `level` was shown for `key`; a memory that cannot be written
/// only means the next call starts again at level 2.
fn remember(memory: &Path, key: &str, level: usize) {
    let mut text = fs::read_to_string(memory).unwrap_or_default();
    let _ = writeln!(text, "{key} {level}");
    if let Some(parent) = memory.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let _ = fs::write(memory, text);
}

#[cfg(test)]
mod memory_tests {
    use super::{key, remember, shown};

    /// What one command showed, the other reads: the highest level per
    /// claim and hint.
    #[test]
    fn the_levels_shown_are_kept_per_claim_and_hint() {
        let dir = std::env::temp_dir().join(format!("grade-hints-{}", std::process::id()));
        let memory = dir.join("target").join("grade-hints.txt");
        let l42 = key(Some("L4.2"), "replay-wrong-result");
        assert_eq!(shown(&memory, &l42), 1);
        remember(&memory, &l42, 2);
        remember(&memory, &key(None, "replay-wrong-result"), 3);
        assert_eq!(shown(&memory, &l42), 2);
        remember(&memory, &l42, 3);
        assert_eq!(shown(&memory, &l42), 3);
        std::fs::remove_dir_all(&dir).expect("the test's own directory");
    }
}
