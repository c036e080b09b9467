//! The sandbox every build and run of a submission goes through:
//! bubblewrap (`bwrap`), with no daemon and no privileges of its own.
//!
//! Inside, the whole file system is read-only; the folders the grader hides
//! (the lab's checkout with its reference, the class, the output folder) are
//! empty; only the few paths a step needs are mounted back, and only its
//! scratch copy (and, for a build, the target directory) is writable. `/tmp`
//! is private and empty, the network is a loopback of its own, and the
//! process tree has its own PID namespace: when the command exits, or the
//! grader dies, every process it started goes with it, and `/proc` shows no
//! grader. The command runs as an unprivileged user with no capabilities.
//!
//! A build goes through the same sandbox as a test run: `include_str!` or
//! `#[path]` can only read what the sandbox shows, and it shows no reference
//! and no other submission.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The program.
const BWRAP: &str = "bwrap";

/// Where a step may look and write.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// Folders shown empty.
    pub hidden: Vec<PathBuf>,
    /// Paths under a hidden folder shown again, read-only.
    pub readable: Vec<PathBuf>,
    /// Paths under a hidden folder shown again, writable.
    pub writable: Vec<PathBuf>,
}

impl Sandbox {
    /// `program` inside the sandbox, started in `dir`. The returned command
    /// is bwrap's; set the environment and the pipes on it as on the
    /// program's (bwrap passes the environment and open descriptors on).
    pub fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut command = Command::new(BWRAP);
        command.args(isolation());
        command.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        // PostgreSQL's server keeps its shared memory in /dev/shm.
        command.args(["--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]);
        for path in &self.hidden {
            command.arg("--tmpfs").arg(path);
        }
        for path in &self.readable {
            command.arg("--ro-bind").arg(path).arg(path);
        }
        for path in &self.writable {
            command.arg("--bind").arg(path).arg(path);
        }
        command.arg("--chdir").arg(dir);
        command.arg("--").arg(program);
        command.env("TMPDIR", "/tmp");
        command
    }
}

/// Namespaces, privileges and lifetime, the same for every step.
fn isolation() -> Vec<&'static str> {
    let mut args = vec![
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ];
    // Started by root, the sandbox still runs its command as nobody: root
    // inside could otherwise undo the read-only mounts.
    #[cfg(unix)]
    if rustix::process::geteuid().is_root() {
        args.extend(["--uid", "65534", "--gid", "65534"]);
    }
    args
}

/// Whether the sandbox can be created here; the reason when it cannot.
pub fn check() -> Result<(), String> {
    let output = Command::new(BWRAP)
        .args(isolation())
        .args(["--ro-bind", "/", "/", "--proc", "/proc", "--", "true"])
        .stdin(Stdio::null())
        .output();
    let advice = "grade runs every submission in a bubblewrap sandbox (Debian package \
                  bubblewrap); install it, or give --no-sandbox to grade without one";
    match output {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "cannot create the sandbox: bwrap says {:?}; {advice}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("cannot run bwrap: {error}; {advice}")),
    }
}

/// The same path, absolute and without links, as bwrap needs it.
pub fn real(path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}
