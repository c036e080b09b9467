//! L3 on PostgreSQL: the lock is a row's, not the database's. `apply` and
//! `install_generation` lock the resource's row before they read its
//! generation; another session meets that lock as contention, at once; the
//! other resource's row stays free.

use fencing_lab::pg::PgLab;
use fencing_lab::{Checkpoint, LabError, Session, describe, describe_error};
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// While paused: may another session lock `resource`'s row? May the
/// authority install on it? Both outcomes go to `seen`.
fn probe_and_install(
    lab: &PgLab,
    seen: &Seen,
    resource: &str,
    generation: i64,
) -> Result<(), LabError> {
    seen.push(probe(lab, resource));
    let install = lab.connect()?.install_generation(resource, generation);
    seen.push(format!(
        "install {resource}: {}",
        describe_install(&install)
    ));
    Ok(())
}

/// May another session lock `resource`'s row right now? As "probe …: …".
fn probe(lab: &PgLab, resource: &str) -> String {
    let got = match lab.probe_row_lock(resource) {
        Ok(()) => "acquired the row lock".to_owned(),
        Err(error) => describe_error(&error),
    };
    format!("probe {resource}: {got}")
}

/// What `probe_and_install` must see while `resource`'s row is locked.
fn row_locked(resource: &str) -> String {
    format!(
        "probe {resource}: {0}; install {resource}: {0}",
        contention()
    )
}

/// While another session holds fund-A's row, apply is told "contention",
/// which is not a verdict; once the row is free the same request applies.
#[rstest]
fn l3_1_apply_fails_as_contention_while_another_session_holds_the_row(lab: Lab) {
    let c = claim("L3.1");
    let mut worker = lab.connect().unwrap();

    let holder = lab.hold_row_lock(A).unwrap();
    c.apply(&mut worker, (A, 1, "r1", 5), contention());
    holder.release().unwrap();
    c.state(&lab, A, 1, 0);
    c.records(&lab, A, &[]);

    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.state(&lab, A, 1, 5);
}

/// Paused right after it read the generation, or right before its effect,
/// apply holds fund-A's row: a probe and an install on other sessions are
/// both refused. A plain read without `lock_row`, or a lock taken after the
/// read, leaves the row free at those points and fails here.
#[rstest]
#[case::after_generation_read(Checkpoint::GenerationRead)]
#[case::before_effect(Checkpoint::BeforeEffect)]
fn l3_2_install_is_refused_while_apply_holds_the_row(lab: Lab, #[case] pause: Checkpoint) {
    let c = claim("L3.2");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    let seen = Seen::default();
    let (hook_lab, hook_seen) = (lab.clone(), seen.clone());
    pause_at(&mut worker, pause, move || {
        probe_and_install(&hook_lab, &hook_seen, A, 2)
    });
    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
    c.while_paused(
        &worker,
        format_args!("while apply was paused {pause}"),
        row_locked(A),
        seen.lines(),
    );

    // The apply committed under generation 1; now the install may land.
    c.install(&mut authority, A, 2, INSTALLED);
    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 1)]);
}

/// install_generation meets a held row as contention, and holds the row
/// itself from its read to its write: no probe, no install, no apply gets in.
///
/// A write's checkpoint fires inside the write, with the row already locked
/// by it, so the pause that finds a lock taken too late (or never taken by
/// `lock_row`) is the one after the read.
#[rstest]
#[case::after_its_read(Checkpoint::GenerationRead)]
#[case::before_its_write(Checkpoint::BeforeInstall)]
fn l3_3_install_locks_the_row_from_its_read_to_its_write(lab: Lab, #[case] pause: Checkpoint) {
    let c = claim("L3.3");
    let mut authority = lab.connect().unwrap();

    let holder = lab.hold_row_lock(A).unwrap();
    c.install(&mut authority, A, 2, contention());
    holder.release().unwrap();
    c.state(&lab, A, 1, 0);

    let seen = Seen::default();
    let (hook_lab, hook_seen) = (lab.clone(), seen.clone());
    pause_at(&mut authority, pause, move || {
        probe_and_install(&hook_lab, &hook_seen, A, 3)?;
        let apply = hook_lab.connect()?.apply(A, 1, "r1", 5);
        hook_seen.push(format!("apply: {}", describe(&apply)));
        Ok(())
    });
    c.install(&mut authority, A, 2, INSTALLED);
    c.while_paused(
        &authority,
        format_args!("while install_generation was paused {pause}"),
        format!("{}; apply: {}", row_locked(A), contention()),
        seen.lines(),
    );
    c.state(&lab, A, 2, 0);
    c.records(&lab, A, &[]);
}

/// Where SQLite's write lock would hold the whole file, PostgreSQL's row
/// lock holds one resource. While apply sits before its effect on fund-A,
/// fund-A's row is locked, and on fund-B another session locks the row,
/// the authority installs 2 and a worker applies under it.
#[rstest]
fn l3_7_apply_paused_on_fund_a_leaves_fund_b_free(lab: Lab) {
    let c = claim("L3.7");
    let mut worker = lab.connect().unwrap();

    let seen = Seen::default();
    let (hook_lab, hook_seen) = (lab.clone(), seen.clone());
    pause_at(&mut worker, Checkpoint::BeforeEffect, move || {
        hook_seen.push(probe(&hook_lab, A));
        probe_and_install(&hook_lab, &hook_seen, B, 2)?;
        let apply = hook_lab.connect()?.apply(B, 2, "b1", 3);
        hook_seen.push(format!("apply {B}: {}", describe(&apply)));
        Ok(())
    });
    c.apply(&mut worker, (A, 1, "a1", 5), applied(5));
    c.while_paused(
        &worker,
        "while apply on fund-A was paused before its effect",
        format!(
            "probe {A}: {}; probe {B}: acquired the row lock; install {B}: {INSTALLED}; apply {B}: {}",
            contention(),
            applied(3)
        ),
        seen.lines(),
    );
    c.state(&lab, A, 1, 5);
    c.state(&lab, B, 2, 3);
    c.records(&lab, B, &[rec(B, "b1", 3, 3, 2)]);
}
