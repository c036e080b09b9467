//! Lesson 8's story, as `cargo run --features postgres-sql` prints it after
//! the PostgreSQL chapter, held like the other lessons' (`transcripts.rs`):
//! to its claims against your code, to the reference's snapshot against the
//! reference.

use fencing_lab::story::{self, POSTGRES_SQL};
use fencing_lab::transcript::Transcript;

#[test]
fn postgres_sql_transcript() {
    crate::support::quiet_learner_panics();
    let (lesson, scenario) = POSTGRES_SQL;
    let transcript = Transcript::new();
    let complete = story::run_lesson(&transcript, &lesson, scenario);
    if !cfg!(feature = "solutions") {
        // Against the learner's code: where the story stopped, if it did,
        // never a snapshot to accept.
        return crate::transcripts::hold_against_claims(lesson.id, &transcript.render(), complete);
    }
    assert!(
        complete,
        "\nlesson 8 stopped early; its transcript so far:\n{}",
        transcript.render()
    );
    insta::assert_snapshot!("l8_sql_functions", transcript.render());
}
