//! The PostgreSQL chapter's story, as `cargo run --features postgres` prints
//! it after the six lessons, held against the reference's
//! snapshot like theirs (`transcripts.rs`).

use fencing_lab::story::{self, POSTGRES};
use fencing_lab::transcript::Transcript;

#[test]
fn postgres_transcript() {
    crate::support::quiet_todo_panics();
    let (lesson, scenario) = POSTGRES;
    let transcript = Transcript::new();
    let complete = story::run_lesson(&transcript, &lesson, scenario);
    if !cfg!(feature = "solutions") {
        // Against the learner's code: the first line that differs from the
        // reference's story, never a snapshot to accept.
        return crate::transcripts::hold_against_reference(
            lesson.id,
            "postgres/snapshots/lab__postgres__transcript__postgres_server.snap",
            &transcript.render(),
        );
    }
    assert!(
        complete,
        "\nthe PostgreSQL chapter stopped early; its transcript so far:\n{}",
        transcript.render()
    );
    insta::assert_snapshot!("postgres_server", transcript.render());
}
