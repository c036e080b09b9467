//! The PostgreSQL chapter's story, as `cargo run --features postgres` prints
//! it after the six lessons, held like theirs (`transcripts.rs`): to its
//! claims against your code, to the reference's snapshot against the
//! reference.

use fencing_lab::story::{self, POSTGRES};
use fencing_lab::transcript::Transcript;

#[test]
fn postgres_transcript() {
    crate::support::quiet_learner_panics();
    let (lesson, scenario) = POSTGRES;
    let transcript = Transcript::new();
    let complete = story::run_lesson(&transcript, &lesson, scenario);
    if !cfg!(feature = "solutions") {
        // Against the learner's code: where the story stopped, if it did,
        // never a snapshot to accept.
        return crate::transcripts::hold_against_claims(lesson.id, &transcript.render(), complete);
    }
    assert!(
        complete,
        "\nthe PostgreSQL chapter stopped early; its transcript so far:\n{}",
        transcript.render()
    );
    insta::assert_snapshot!("postgres_server", transcript.render());
}
