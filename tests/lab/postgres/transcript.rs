//! The PostgreSQL chapter's story, as `cargo run --features postgres` prints
//! it after the six lessons, pinned by a snapshot like theirs.

use fencing_lab::story::{self, POSTGRES};
use fencing_lab::transcript::Transcript;

#[test]
fn postgres_transcript() {
    crate::support::quiet_todo_panics();
    let (lesson, scenario) = POSTGRES;
    let transcript = Transcript::new();
    let complete = story::run_lesson(&transcript, &lesson, scenario);
    assert!(
        complete,
        "\nthe PostgreSQL chapter stopped early; its transcript so far:\n{}",
        transcript.render()
    );
    insta::assert_snapshot!("postgres_server", transcript.render());
}
