//! The story of each lesson, as `cargo run` prints it, held against the
//! reference's story in `snapshots/`.
//!
//! Against your exercises, a story that differs fails with the first line
//! that differs, the claim that line belongs to, and the file to open: the
//! claim's own tests say what is wrong. The snapshots are the reference's
//! story and are never yours to accept. Against the reference
//! (`--features solutions`), a change to what the lab says is a snapshot diff
//! for the course's authors to review (`cargo insta review`).

use fencing_lab::claims;
use fencing_lab::story::{self, SCENARIOS};
use fencing_lab::transcript::Transcript;
use rstest::rstest;

#[rstest]
#[case::l1(0, "l1_authority_can_become_stale")]
#[case::l2(1, "l2_explicit_contract")]
#[case::l3(2, "l3_decision_in_transaction")]
#[case::l4(3, "l4_duplicates")]
#[case::l5(4, "l5_counterexamples")]
#[case::l6(5, "l6_bad_input")]
fn lesson_transcript(#[case] index: usize, #[case] name: &str) {
    crate::support::quiet_todo_panics();
    let (lesson, scenario) = SCENARIOS[index];
    let transcript = Transcript::new();
    let complete = story::run_lesson(&transcript, &lesson, scenario);
    let story = transcript.render();
    if cfg!(feature = "solutions") {
        // An unfinished lesson is not a transcript to review: say why it
        // stopped instead of writing a pending snapshot.
        assert!(
            complete,
            "\nlesson {} stopped early; its transcript so far:\n{story}",
            lesson.id,
        );
        insta::assert_snapshot!(name, story);
    } else {
        hold_against_reference(lesson.id, &format!("lab__transcripts__{name}.snap"), &story);
    }
}

/// Fails, the learner's way, when `story` (a chapter's, against the
/// learner's code) differs from the reference's story in the snapshot file
/// `snapshot` (a path under `tests/lab/snapshots/`, or the track's own
/// `snapshots/` folder as `postgres/snapshots/…`).
pub fn hold_against_reference(chapter: &str, snapshot: &str, story: &str) {
    if let Some(difference) = first_difference(&reference(snapshot), story) {
        panic!("{}", difference.explain(chapter));
    }
}

/// The reference's story of a chapter: its snapshot file, less insta's
/// header.
fn reference(snapshot: &str) -> String {
    let folder = if snapshot.contains('/') {
        ""
    } else {
        "snapshots/"
    };
    let path = format!(
        "{}/tests/lab/{folder}{snapshot}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("the reference's story {path}: {error}"));
    // `---`, the header's fields, `---`, then the story.
    text.splitn(3, "---\n")
        .nth(2)
        .unwrap_or_default()
        .to_owned()
}

/// The first line where two stories part.
struct Difference {
    line: usize,
    reference: Option<String>,
    yours: Option<String>,
}

fn first_difference(reference: &str, yours: &str) -> Option<Difference> {
    let (mut reference, mut yours) = (reference.lines(), yours.lines());
    for line in 1.. {
        let (expected, got) = (reference.next(), yours.next());
        if expected.is_none() && got.is_none() {
            return None;
        }
        if expected != got {
            return Some(Difference {
                line,
                reference: expected.map(str::to_owned),
                yours: got.map(str::to_owned),
            });
        }
    }
    None
}

impl Difference {
    /// The failure: the line, both versions, the claim it belongs to (from
    /// its `[LX.Y]` label) and where to look next.
    fn explain(&self, lesson: &str) -> String {
        let label = |line: &Option<String>| {
            line.as_deref()
                .and_then(|line| line.trim_start().strip_prefix('['))
                .and_then(|rest| rest.split_once(']'))
                .and_then(|(id, _)| claims::claim(id))
        };
        let claim = label(&self.reference).or_else(|| label(&self.yours));
        // An unfinished stub: one line, like a claim's failure on a stub.
        if let Some(stub) = self
            .yours
            .as_deref()
            .and_then(|line| line.find("-> ").map(|at| &line[at + 3..]))
            .filter(|said| said.contains("is not implemented yet"))
        {
            let claim = claim.map_or(String::new(), |claim| format!(" (claim {})", claim.id));
            return format!(
                "the story of {lesson} stops at its line {}{claim}: {stub}",
                self.line
            );
        }
        let shown = |line: &Option<String>| {
            line.as_deref()
                .map_or("(the story ends here)".to_owned(), |line| {
                    line.trim().to_owned()
                })
        };
        let mut out = format!(
            "\nthe story of {lesson} differs from the reference's at its line {}\n  reference: {}\n  yours:     {}\n",
            self.line,
            shown(&self.reference),
            shown(&self.yours),
        );
        if let Some(claim) = claim {
            out.push_str(&format!(
                "  claim:     {} {}\n  open:      {}\n  next:      cargo test {} (the claim's own tests say which step fails); cargo run prints the whole story\n",
                claim.id,
                claim.text,
                claim.files.join(" and "),
                claim.test_prefix(),
            ));
        } else {
            out.push_str("  next:      cargo run prints the whole story\n");
        }
        out
    }
}
