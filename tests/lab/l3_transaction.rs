//! L3: the decision is applied inside the transaction. Every test runs in
//! both journal modes, and runs its scene (`src/scenes/l3.rs`); the story
//! tells one case of each.

use fencing_lab::scenes::l3;
use fencing_lab::{Checkpoint, Journal, Lab};
use rstest::rstest;

use crate::support::*;

/// While another connection holds the write lock, apply is told
/// "contention", which is not a verdict on its generation; once the lock is
/// released the same request goes through.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l3_1_apply_fails_as_contention_while_locked_then_succeeds(#[case] journal: Journal) {
    let c = claim("L3.1");
    c.run(l3::apply_meets_contention(&c, &Lab::new(journal).unwrap()));
}

/// Paused right after it read the generation, or right before its effect,
/// apply still holds the write lock: an install on another connection meets
/// contention, and lands after apply commits. An install that gets in (the
/// pause fell in an early look) must be seen: apply is then stale. A
/// DEFERRED transaction in WAL mode, or a generation read before BEGIN,
/// lets the install in and goes on with what it read, and fails here.
#[rstest]
#[case::rollback_after_generation_read(Journal::Rollback, Checkpoint::GenerationRead)]
#[case::rollback_before_effect(Journal::Rollback, Checkpoint::BeforeEffect)]
#[case::wal_after_generation_read(Journal::Wal, Checkpoint::GenerationRead)]
#[case::wal_before_effect(Journal::Wal, Checkpoint::BeforeEffect)]
fn l3_2_install_is_refused_while_apply_sits_between_validation_and_effect(
    #[case] journal: Journal,
    #[case] pause: Checkpoint,
) {
    let c = claim("L3.2");
    c.run(l3::apply_holds_the_lock(
        &c,
        &Lab::new(journal).unwrap(),
        pause,
    ));
}

/// install_generation meets a held write lock as contention, like apply.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l3_3_install_fails_as_contention_while_another_writer_holds_the_lock(#[case] journal: Journal) {
    let c = claim("L3.3");
    c.run(l3::install_meets_contention(
        &c,
        &Lab::new(journal).unwrap(),
    ));
}

/// Between reading the installed generation and writing the new one,
/// install_generation holds the write lock: no apply and no other install
/// gets in. One that does (the pause fell in an early look) must be seen:
/// the install is then not higher. Paused right after its read, a DEFERRED
/// transaction in WAL mode lets the other install in and fails here.
#[rstest]
#[case::rollback_after_generation_read(Journal::Rollback, Checkpoint::GenerationRead)]
#[case::rollback_before_install(Journal::Rollback, Checkpoint::BeforeInstall)]
#[case::wal_after_generation_read(Journal::Wal, Checkpoint::GenerationRead)]
#[case::wal_before_install(Journal::Wal, Checkpoint::BeforeInstall)]
fn l3_3_install_holds_the_write_lock_from_its_read_to_its_write(
    #[case] journal: Journal,
    #[case] pause: Checkpoint,
) {
    let c = claim("L3.3");
    c.run(l3::install_holds_the_lock(
        &c,
        &Lab::new(journal).unwrap(),
        pause,
    ));
}

/// The whole lock story, in the mode the case names, with the file really in
/// that mode: contention while another writer holds the lock, then apply
/// paused after its generation read keeps the lock, then the install lands
/// after.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l3_4_lock_story_holds_in_this_journal_mode(#[case] journal: Journal) {
    let c = claim("L3.4");
    c.run(l3::lock_story_in_this_journal_mode(
        &c,
        &Lab::new(journal).unwrap(),
        journal,
    ));
}
