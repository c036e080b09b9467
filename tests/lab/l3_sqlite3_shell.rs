//! L3.5: a real external client, the `sqlite3` shell in another process,
//! holds the write lock while `apply` runs. (The shell itself is in
//! `sqlite3_shell.rs`.)

use fencing_lab::{Journal, Lab};
use rstest::rstest;

use crate::sqlite3_shell::Shell;
use crate::support::*;

/// The shell, acting as an authority in another process, begins IMMEDIATE
/// and writes generation 2 inside its open transaction. Meanwhile `apply`
/// under generation 2 gets contention: the request was not judged, neither
/// as never issued (what a reader outside the write lock would see, since
/// the shell's 2 is not committed) nor as applied. Once the shell commits
/// and quits, the same request goes through.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l3_5_sqlite3_shell_holding_begin_immediate_makes_apply_contend(#[case] journal: Journal) {
    let c = claim("L3.5");
    let lab = Lab::new(journal).unwrap();
    let mut worker = lab.connect().unwrap();

    // The shell takes the write lock and installs 2, uncommitted.
    let mut shell = Shell::start(&c, &lab);
    shell.send(
        &c,
        "BEGIN IMMEDIATE;\n\
         UPDATE resources SET generation = 2 WHERE name = 'fund-A';\n",
    );
    shell.wait_until_locked(&c);

    c.apply(&mut worker, (A, 2, "r1", 5), contention());

    // The shell commits and quits; its generation 2 is now installed.
    shell.commit_and_quit(&c);
    c.state(&lab, A, 2, 0);
    c.records(&lab, A, &[]);

    c.apply(&mut worker, (A, 2, "r1", 5), applied(5));
    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[rec(A, "r1", 5, 5, 2)]);
}
