//! Real external clients: the `sqlite3` command-line shell, another process
//! with its own copy of SQLite, opens the lab file. It holds the write lock
//! while `apply` runs (L3.5), and it writes a value directly, around the
//! contract (L5.7).
//!
//! The shell is the Debian package `sqlite3` (CI installs it). Where it is
//! missing these tests fail and say so: a claim that was not checked is never
//! counted as passed.

use std::fmt::Display;
use std::io::{BufRead, BufReader, ErrorKind, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use fencing_lab::{Journal, Lab};
use rstest::rstest;

use crate::support::*;

/// The shell's name on PATH.
const SHELL: &str = "sqlite3";
/// What a test says when the shell cannot be found.
const MISSING: &str = "sqlite3 shell not found on PATH: install the Debian package sqlite3";
/// The line the shell prints once it holds the write lock.
const LOCKED: &str = "locked";

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

/// The `sqlite3` shell on the lab file, reading statements from a pipe.
struct Shell {
    child: Child,
    /// `None` once closed, which tells the shell its input has ended.
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Shell {
    /// The shell's arguments before the database: no `~/.sqliterc` (a
    /// learner's settings could change what it prints), plain list output,
    /// and stop at the first error rather than carry on without the lock.
    fn options() -> [&'static str; 5] {
        ["-init", NO_INIT_FILE, "-list", "-noheader", "-bail"]
    }

    /// Starts an interactive shell whose input the test writes.
    fn start(c: &Check, lab: &Lab) -> Shell {
        let mut child = Command::new(SHELL)
            .args(Shell::options())
            .arg(lab.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| not_run(c, "start the sqlite3 shell on the lab file", error));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().map(|out| BufReader::new(out).lines());
        match (stdin, stdout) {
            (Some(stdin), Some(stdout)) => Shell {
                child,
                stdin: Some(stdin),
                stdout,
            },
            _ => c.fail(
                "start the sqlite3 shell",
                "pipes to its stdin and stdout",
                "no pipes",
            ),
        }
    }

    /// Runs one statement as `sqlite3 <file> <sql>` and waits for it.
    fn run(c: &Check, lab: &Lab, sql: &str) -> Output {
        Command::new(SHELL)
            .args(Shell::options())
            .arg(lab.path())
            .arg(sql)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| not_run(c, "run the sqlite3 shell on the lab file", error))
    }

    fn send(&mut self, c: &Check, input: &str) {
        let sent = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(input.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(ErrorKind::BrokenPipe.into()),
        };
        if let Err(error) = sent {
            let stderr = self.finish_after_error();
            c.fail(
                format_args!("send {input:?} to the sqlite3 shell"),
                "the shell reads it",
                format_args!("{error}; {stderr}"),
            );
        }
    }

    /// Asks the shell to print a marker and reads until it does. The shell
    /// runs its input in order, so once the marker is out, every statement
    /// sent before it has run: the lock is held. No sleep, no polling: the
    /// read returns the marker or, if the shell stopped, the end of its
    /// output.
    fn wait_until_locked(&mut self, c: &Check) {
        self.send(c, &format!("SELECT '{LOCKED}';\n"));
        for line in self.stdout.by_ref() {
            match line {
                Ok(line) if line == LOCKED => return,
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        let stderr = self.finish_after_error();
        c.fail(
            "the sqlite3 shell runs BEGIN IMMEDIATE and an UPDATE, then prints a marker",
            format_args!("the shell prints {LOCKED:?} while it holds the write lock"),
            format_args!("its output ended first; {stderr}"),
        );
    }

    /// Commits, quits, and waits for the shell to exit cleanly.
    fn commit_and_quit(mut self, c: &Check) {
        self.send(c, "COMMIT;\n.quit\n");
        // Closing the pipe is the end of input, in case `.quit` is not read.
        self.stdin = None;
        let status = self.child.wait();
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
        }
        let got = match status {
            Ok(status) if status.success() && stderr.trim().is_empty() => {
                "exited with status 0, no error output".to_owned()
            }
            Ok(status) => format!("{status}; stderr: {}", stderr.trim()),
            Err(error) => format!("cannot wait for the shell: {error}"),
        };
        c.same(
            "the sqlite3 shell runs COMMIT and .quit",
            "exited with status 0, no error output",
            got,
        );
    }

    /// After a failed step: stop the shell (it is ours, started above) and
    /// say what it wrote to stderr.
    fn finish_after_error(&mut self) -> String {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
        }
        match stderr.trim() {
            "" => "the shell wrote nothing to stderr".to_owned(),
            text => format!("the shell's stderr: {text}"),
        }
    }
}

impl Drop for Shell {
    /// A test that fails half-way must not leave the shell running, nor
    /// holding the lab's file open while its directory is removed.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The empty init file: the shell then reads no `~/.sqliterc`.
#[cfg(windows)]
const NO_INIT_FILE: &str = "NUL";
#[cfg(not(windows))]
const NO_INIT_FILE: &str = "/dev/null";

/// How a one-shot shell run ended, in the words the test expects.
fn finished(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() && stderr.trim().is_empty() {
        "exited with status 0, no error output".to_owned()
    } else {
        format!("{}; stderr: {}", output.status, stderr.trim())
    }
}

/// The shell could not be started: the claim was not checked, so the test
/// fails, and says why instead of pointing at the learner's code.
fn not_run(c: &Check, step: &str, error: std::io::Error) -> ! {
    let why: &dyn Display = if error.kind() == ErrorKind::NotFound {
        &MISSING
    } else {
        &error
    };
    c.not_run(step, why)
}
