//! The real external client of L3.5 and L5.7: the `sqlite3` command-line
//! shell, another process with its own copy of SQLite, opens the lab file.
//!
//! The shell is the Debian package `sqlite3` (CI installs it). Where it is
//! missing those tests fail and say so: a claim that was not checked is never
//! counted as passed.

use std::fmt::Display;
use std::io::{BufRead, BufReader, ErrorKind, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use fencing_lab::Lab;

use crate::support::Check;

/// The shell's name on PATH.
const SHELL: &str = "sqlite3";
/// What a test says when the shell cannot be found.
const MISSING: &str = "sqlite3 shell not found on PATH: install the Debian package sqlite3";
/// The line the shell prints once it holds the write lock.
const LOCKED: &str = "locked";

/// The `sqlite3` shell on the lab file, reading statements from a pipe.
pub struct Shell {
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
    pub fn start(c: &Check, lab: &Lab) -> Shell {
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
    pub fn run(c: &Check, lab: &Lab, sql: &str) -> Output {
        Command::new(SHELL)
            .args(Shell::options())
            .arg(lab.path())
            .arg(sql)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| not_run(c, "run the sqlite3 shell on the lab file", error))
    }

    pub fn send(&mut self, c: &Check, input: &str) {
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
    pub fn wait_until_locked(&mut self, c: &Check) {
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
    pub fn commit_and_quit(mut self, c: &Check) {
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
pub fn finished(output: &Output) -> String {
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
