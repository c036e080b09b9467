//! L5.7: the `sqlite3` shell, another process, writes a value directly,
//! around the contract. (The shell itself is in `sqlite3_shell.rs`.)

use fencing_lab::{Journal, Lab};
use rstest::rstest;

use crate::sqlite3_shell::{Shell, finished};
use crate::support::*;

/// After the authority installed 2 and a stale apply was refused, the shell
/// runs a plain UPDATE: the value changes while generation 2 is installed,
/// and no record says who did it. Nothing checks a write that does not go
/// through `apply`, whoever makes it.
#[rstest]
#[case::rollback(Journal::Rollback)]
#[case::wal(Journal::Wal)]
fn l5_7_sqlite3_shell_update_changes_the_value_behind_the_contract(#[case] journal: Journal) {
    let c = claim("L5.7");
    let lab = Lab::new(journal).unwrap();
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 1, "r1", 5), stale(1, 2));
    c.state(&lab, A, 2, 0);

    let update = "UPDATE resources SET value = 100 WHERE name = 'fund-A';";
    let output = Shell::run(&c, &lab, update);
    c.same(
        format_args!("sqlite3 <lab file> {update:?}"),
        "exited with status 0, no error output",
        finished(&output),
    );
    c.state(&lab, A, 2, 100);
    c.records(&lab, A, &[]);
}
