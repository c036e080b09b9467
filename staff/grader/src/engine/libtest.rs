//! libtest's normal, human output, read as it streams (stable Rust has no
//! machine format for it), for what a failed test printed: the `test NAME
//! ... FAILED` lines say whose captured output to keep. Also `--list`.
//!
//! None of it decides a grade: the code under test writes to the same stdout
//! and could print anything. Verdicts come from [`crate::engine::verdicts`].
//!
//! Everything kept is bounded: verdicts for at most [`MAX_TESTS`] names, and
//! [`SECTION_KEEP`] bytes of each end of a failure's captured output.

use std::collections::BTreeMap;

use crate::engine::process::{Kept, LineSink};

/// The most test names remembered; the suite has about sixty.
pub const MAX_TESTS: usize = 1024;

/// How many bytes are kept of the beginning, and of the end, of one
/// failure's captured output. The panic that failed the test comes last.
pub const SECTION_KEEP: usize = 4 * 1024;

/// What libtest said about one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `ok`.
    Passed,
    /// `FAILED`.
    Failed,
    /// `ignored`: neither a pass nor a failure.
    Ignored,
}

/// Where in libtest's output the parser is.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Part {
    /// Verdict lines, as tests finish.
    #[default]
    Verdicts,
    /// After the first `failures:`, before the first section.
    Failures,
    /// Inside `---- NAME stdout ----`: that test's captured output.
    Section(String),
    /// The closing list of failed names, then the summary.
    List,
}

/// One test binary's run, as far as it was seen.
#[derive(Debug, Default)]
pub struct TestOutput {
    verdicts: BTreeMap<String, Verdict>,
    sections: BTreeMap<String, Kept>,
    part: Part,
}

impl TestOutput {
    /// Takes in a later run's output, for tests this one has none of.
    pub fn absorb(&mut self, later: TestOutput) {
        for (name, verdict) in later.verdicts {
            self.verdicts.entry(name).or_insert(verdict);
        }
        for (name, kept) in later.sections {
            self.sections.entry(name).or_insert(kept);
        }
    }

    /// The verdict of `name`, if libtest printed one.
    pub fn verdict(&self, name: &str) -> Option<Verdict> {
        self.verdicts.get(name).copied()
    }

    /// The captured output of a failed test, as libtest printed it (its
    /// middle left out if it was long).
    pub fn section(&self, name: &str) -> Option<String> {
        self.sections.get(name).map(Kept::text)
    }

    fn record(&mut self, name: &str, verdict: Verdict) {
        if let Some(known) = self.verdicts.get_mut(name) {
            // A test reported twice keeps its failure: a later `ok` with the
            // same name can only come from something printing lookalikes.
            if *known != Verdict::Failed {
                *known = verdict;
            }
        } else if self.verdicts.len() < MAX_TESTS {
            self.verdicts.insert(name.to_owned(), verdict);
        }
    }
}

impl LineSink for TestOutput {
    const MAX_LINE: usize = 16 * 1024;

    fn line(&mut self, line: &str, _cut: bool) {
        if let Part::Section(name) = &self.part {
            if line == "failures:" {
                self.part = Part::List;
            } else if let Some(next) = section_header(line) {
                self.part = self.section_part(next);
            } else if let Some(kept) = self.sections.get_mut(name) {
                kept.push(line.as_bytes());
                kept.push(b"\n");
            }
            return;
        }
        if line == "failures:" {
            if self.part == Part::Verdicts {
                self.part = Part::Failures;
            }
        } else if let Some(name) = section_header(line) {
            if self.part == Part::Failures {
                self.part = self.section_part(name);
            }
        } else if let Some((name, verdict)) = verdict_line(line) {
            self.record(name, verdict);
        }
    }
}

impl TestOutput {
    /// Starts the section of `name`, kept only for a test seen failing.
    fn section_part(&mut self, name: &str) -> Part {
        if self.verdict(name) == Some(Verdict::Failed) {
            self.sections
                .entry(name.to_owned())
                .or_insert_with(|| Kept::new(SECTION_KEEP));
        }
        Part::Section(name.to_owned())
    }
}

/// `---- NAME stdout ----` gives NAME.
fn section_header(line: &str) -> Option<&str> {
    line.strip_prefix("---- ")?.strip_suffix(" stdout ----")
}

/// `test NAME ... ok` gives NAME and its verdict. A flood printed without a
/// newline runs into the next verdict line (`…xxxxtest NAME ... ok`), so the
/// line is read from its end.
fn verdict_line(line: &str) -> Option<(&str, Verdict)> {
    let (left, result) = line.rsplit_once(" ... ")?;
    let verdict = match result {
        "ok" => Verdict::Passed,
        "FAILED" => Verdict::Failed,
        ignored if ignored.starts_with("ignored") => Verdict::Ignored,
        _ => return None,
    };
    let (before, name) = left.rsplit_once(' ')?;
    (before.ends_with("test") && !name.is_empty()).then_some((name, verdict))
}

/// The names `--list` prints, one `NAME: test` line each.
#[derive(Debug, Default)]
pub struct TestList {
    /// The listed tests, in listing order.
    pub names: Vec<String>,
}

impl LineSink for TestList {
    const MAX_LINE: usize = 4 * 1024;

    fn line(&mut self, line: &str, cut: bool) {
        match line.strip_suffix(": test") {
            Some(name) if !cut && self.names.len() < MAX_TESTS => self.names.push(name.to_owned()),
            _ => {}
        }
    }
}

/// A failed test's captured output, split in two: the panic that failed it,
/// and whatever the code printed before.
#[derive(Debug, Default, Clone)]
pub struct Failure {
    /// The panic message: for a graded test, the claim, the step, what was
    /// expected and what happened.
    pub message: String,
    /// What else the test printed (the learner's own prints, other panics).
    pub output: String,
    /// What happened in the failing step, where the test sent it
    /// (`lab_claims::facts::wire`); empty otherwise.
    pub facts: String,
    /// The reference's run of the same step, in the same words
    /// ([`crate::engine::reference_runs`]); empty where there is none.
    pub reference: String,
}

impl Failure {
    /// Splits libtest's section at its last `thread '…' panicked at` line:
    /// the last panic is the one that failed the test; a panic of the
    /// learner's code caught by the harness comes earlier.
    pub fn from_section(section: &str) -> Failure {
        let lines: Vec<&str> = section.lines().collect();
        let header = lines
            .iter()
            .rposition(|line| line.starts_with("thread '") && line.contains(" panicked at "));
        let Some(header) = header else {
            return Failure {
                message: section.trim().to_owned(),
                output: String::new(),
                facts: String::new(),
                reference: String::new(),
            };
        };
        let message: Vec<&str> = lines[header + 1..]
            .iter()
            .copied()
            .filter(|line| !line.starts_with("note: run with `RUST_BACKTRACE"))
            .collect();
        Failure {
            message: message.join("\n").trim().to_owned(),
            output: lines[..header].join("\n").trim().to_owned(),
            facts: String::new(),
            reference: String::new(),
        }
    }
}

impl Failure {
    /// The failure a test sent (`message`, its verdict's text) with what
    /// libtest printed for it: the output is what came before the panic
    /// that failed it. A claim's failure is printed as its message alone,
    /// with no `thread '…' panicked at` line above it (nor a panic of the
    /// learner's code, which the harness turns into the call's answer), so
    /// the output is then the section up to that message.
    pub fn sent(section: &str, message: &str) -> Failure {
        let message = message.trim();
        let printed = Failure::from_section(section);
        let output = if printed.output.is_empty() && !message.is_empty() {
            section
                .trim_end()
                .strip_suffix(message)
                .map(|before| before.trim().to_owned())
                .unwrap_or_default()
        } else {
            printed.output
        };
        Failure {
            message: message.to_owned(),
            output,
            facts: String::new(),
            reference: String::new(),
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
pub fn cut_at_boundary(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::Failure;

    #[test]
    fn the_learners_prints_above_a_claims_message_are_its_output() {
        let message = "claim L1.1 failed on SQLite: x\n  got:      apply panicked: boom";
        let section = format!("checking fund-A\n\n{message}\n");
        let failure = Failure::sent(&section, message);
        assert_eq!(failure.output, "checking fund-A");
        assert_eq!(failure.message, message);
        assert_eq!(Failure::sent(&format!("\n{message}\n"), message).output, "");
    }

    #[test]
    fn a_panic_report_still_splits_the_section() {
        let section = "printed\nthread 't' panicked at tests/lab/x.rs:1:1:\nassertion failed\n";
        let failure = Failure::sent(section, "assertion failed");
        assert_eq!(failure.output, "printed");
        assert_eq!(failure.message, "assertion failed");
    }
}
