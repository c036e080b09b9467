//! The story of each lesson, as `cargo run` prints it, pinned by a snapshot.
//! A change to what the lab says shows up here as a diff to review
//! (`cargo insta review`, or `INSTA_UPDATE=always cargo test`).

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
    // An unfinished lesson is not a transcript to review: say why it
    // stopped instead of writing a pending snapshot.
    assert!(
        complete,
        "\nlesson {} stopped early; its transcript so far:\n{}",
        lesson.id,
        transcript.render()
    );
    insta::assert_snapshot!(name, transcript.render());
}
