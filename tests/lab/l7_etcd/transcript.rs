//! The etcd chapter's story, as `cargo run --features etcd` prints it after
//! the other lessons, held like theirs (`transcripts.rs`): to its claims
//! against your code, to the reference's snapshot against the reference.
//! Its workers are this test binary, started again on this test.

use fencing_lab::story::etcd as story;
use fencing_lab::transcript::Transcript;

use super::serve_if_worker;

#[test]
fn etcd_transcript() {
    serve_if_worker();
    crate::support::quiet_learner_panics();
    let program = super::this_test;
    let transcript = Transcript::new();
    let complete = fencing_lab::story::run_lesson(&transcript, &story::LESSON, |n| {
        story::chapter(n, &program)
    });
    if !cfg!(feature = "solutions") {
        // Against the learner's code: where the story stopped, if it did,
        // never a snapshot to accept.
        return crate::transcripts::hold_against_claims(
            story::LESSON.id,
            &transcript.render(),
            complete,
        );
    }
    assert!(
        complete,
        "\nthe etcd chapter stopped early; its transcript so far:\n{}",
        transcript.render()
    );
    insta::assert_snapshot!("etcd_chapter", transcript.render());
}
