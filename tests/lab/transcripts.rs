//! The story of each lesson, as `cargo run` prints it.
//!
//! Against your exercises, a story fails only where it stops: at a stub, or
//! at the first step whose answer differs from what its claim expects, with
//! the claim, the step, the file to open and the command that runs the
//! claim's own tests, which fail there too. Where the story runs to its end
//! it passes, even if its words differ from the reference's: `cargo grade`
//! and `cargo test` give one verdict. Against the reference
//! (`--features solutions`), the story is held against the snapshots in
//! `snapshots/`: a change to what the lab says is a snapshot diff for the
//! course's authors to review (`cargo insta review`).

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
    crate::support::quiet_learner_panics();
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
        hold_against_claims(lesson.id, &story, complete);
    }
}

/// Fails, the learner's way, where the story of `chapter` (against the
/// learner's code) stopped: at a stub, or at the first step whose answer
/// differs from what its claim expects, which the claim's own tests check
/// too. A story that ran to its end passes, even where its words differ
/// from the reference's (a trigger's own error message, say): every step
/// answered as its claim expects, and the claims' tests give the verdict.
/// This test tells it again, never another one.
pub fn hold_against_claims(chapter: &str, story: &str, complete: bool) {
    if complete {
        return;
    }
    // The narrator's last note: `  stopped: ` and why, on one or more lines.
    let stop = story
        .find("\n  stopped: ")
        .map_or("(no reason given)", |at| story[at + 12..].trim_end());
    if !stop.contains('\n') {
        // A stub: one line, like a claim's failure on a stub.
        panic!("the story of {chapter} stops at a stub: {stop}");
    }
    panic!("\nthe story of {chapter} stopped (cargo run tells it all): {stop}\n");
}
