//! Building the graded suite with cargo and running its test binary.
//!
//! The build is `cargo test --test lab --no-run`, whose JSON messages name
//! the test executable and carry the compiler's errors. The executable is
//! then run directly, not through `cargo test`, so that a timeout kills the
//! tests and nothing else, and so that its output is read as it comes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::libtest::{TestList, TestOutput, cut_at_boundary};
use crate::process::{self, Caps, Ended, LineSink, Settings, Stderr};
use crate::score::Score;

/// The graded test target, `tests/lab`.
const TEST_TARGET: &str = "lab";

/// The address space one test run may use. The suite needs a small fraction
/// of it; a loop that allocates is stopped here instead of by the machine.
const MEMORY: u64 = 4 << 30;

/// How long `--list` may take: it runs no test.
const LIST_LIMIT: Duration = Duration::from_secs(30);

/// Where and how to build and run the suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The package: this checkout, or a class's scratch copy.
    pub dir: PathBuf,
    /// A target directory shared by a whole class, or cargo's default.
    pub target_dir: Option<PathBuf>,
    /// Build with `--features solutions` (the reference).
    pub solutions: bool,
    /// Build with `--features postgres` (the PostgreSQL track's tests too).
    pub postgres: bool,
    /// Show cargo's progress and rendered diagnostics on stderr, as
    /// `cargo test` would, instead of collecting the first error.
    pub interactive: bool,
    /// The temporary directory of the tests' lab files, or the system's.
    pub tmp_dir: Option<PathBuf>,
    /// The longest a build may take.
    pub build_limit: Duration,
    /// The longest a test run may take.
    pub test_limit: Duration,
}

/// What a build gave.
#[derive(Debug)]
pub enum Built {
    /// The test executable, and whether cargo reused the library as it was.
    Executable {
        /// Its path.
        path: PathBuf,
        /// `true` when the crate with the exercises was not recompiled.
        library_fresh: bool,
    },
    /// The code does not compile; the first error, rendered (empty when
    /// cargo printed the errors itself).
    CompileError(String),
    /// The build took longer than its limit and was stopped.
    TimedOut(Duration),
    /// Cargo failed for another reason: the lab's, not the submission's.
    Failed(String),
}

/// Why a test run did not finish cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// It ran past the wall-clock limit and was killed.
    TimedOut,
    /// The process exited, or died, before libtest's summary.
    EndedEarly,
    /// It finished, but some verdict lines could not be read.
    Garbled,
}

impl Trouble {
    /// A few words for the summary table.
    pub fn short(self) -> &'static str {
        match self {
            Trouble::TimedOut => "timed out",
            Trouble::EndedEarly => "ended early",
            Trouble::Garbled => "verdicts unreadable",
        }
    }
}

/// What a test run gave.
#[derive(Debug)]
pub struct Ran {
    /// Per track, per claim.
    pub score: Score,
    /// Why the run did not finish cleanly, and what happened, if it did not.
    pub problem: Option<(Trouble, String)>,
    /// How much the run printed to stdout, in bytes.
    pub stdout_bytes: u64,
}

impl Suite {
    /// Builds the graded suite.
    pub fn build(&self) -> Result<Built, String> {
        let mut command = Command::new(cargo());
        command
            .current_dir(&self.dir)
            .args(["test", "--test", TEST_TARGET, "--no-run"])
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"));
        if self.interactive {
            command.arg("--message-format=json-render-diagnostics");
        } else {
            // The lock file is the lab's: a class builds exactly that.
            command.args(["--message-format=json", "--locked", "--color", "never"]);
        }
        let features: Vec<&str> = [(self.solutions, "solutions"), (self.postgres, "postgres")]
            .into_iter()
            .filter_map(|(on, feature)| on.then_some(feature))
            .collect();
        if !features.is_empty() {
            command.args(["--features", &features.join(",")]);
        }
        if let Some(target_dir) = &self.target_dir {
            command.env("CARGO_TARGET_DIR", target_dir);
        }
        if !self.interactive {
            // A class builds as a plain `cargo test` would, whatever the
            // instructor's shell says: with `RUSTFLAGS=-D warnings` from CI,
            // an unused variable would otherwise score 0.
            for key in [
                "RUSTFLAGS",
                "CARGO_ENCODED_RUSTFLAGS",
                "CARGO_BUILD_RUSTFLAGS",
            ] {
                command.env_remove(key);
            }
        }
        let settings = Settings {
            wall: self.build_limit,
            stderr: if self.interactive {
                Stderr::Inherit
            } else {
                Stderr::Capture
            },
            own_group: !self.interactive,
            caps: None,
        };
        let finished = process::run::<CargoMessages>(&mut command, settings)
            .map_err(|error| format!("cannot run cargo: {error}"))?;
        let messages = finished.sink;
        if let Ended::TimedOut(limit) = finished.ended {
            return Ok(Built::TimedOut(limit));
        }
        match (messages.executable, messages.first_error) {
            (_, Some(error)) => Ok(Built::CompileError(error)),
            (Some(path), None) if messages.success != Some(false) => Ok(Built::Executable {
                path,
                library_fresh: messages.library_fresh.unwrap_or(false),
            }),
            // Interactively cargo has shown its errors itself, on stderr.
            _ if messages.compile_failed || self.interactive => {
                Ok(Built::CompileError(String::new()))
            }
            _ => Ok(Built::Failed(format!(
                "cargo failed without a compiler error:\n{}",
                last_lines(&finished.stderr, 12)
            ))),
        }
    }

    /// Lists the suite's tests, then runs them all.
    pub fn run(&self, executable: &Path) -> Result<Ran, String> {
        // Without the list, a test that never reports would go unnoticed
        // and its claim could pass on its other tests alone.
        let listed = process::run::<TestList>(
            &mut self.test_command(executable, &["--list"]),
            self.test_settings(LIST_LIMIT),
        )
        .map_err(|error| format!("cannot run the test binary: {error}"))?;
        let listed = match listed.ended {
            Ended::Exited(status) if status.success() && !listed.sink.names.is_empty() => {
                Some(listed.sink.names)
            }
            _ => None,
        };

        let finished = process::run::<TestOutput>(
            &mut self.test_command(executable, &[]),
            self.test_settings(self.test_limit),
        )
        .map_err(|error| format!("cannot run the test binary: {error}"))?;
        let output = &finished.sink;
        let score = Score::of_run(listed.as_deref(), output);

        let unreported = listed
            .as_ref()
            .map_or(0, |listed| listed.len().saturating_sub(output.reported()));
        let problem = match finished.ended {
            Ended::TimedOut(limit) => Some((
                Trouble::TimedOut,
                format!(
                    "the test run took longer than {} s and was stopped; {unreported} of its \
                     tests never reported",
                    limit.as_secs()
                ),
            )),
            Ended::Exited(_) if output.summary().is_some() && unreported == 0 => None,
            Ended::Exited(_) if output.summary().is_some() => Some((
                Trouble::Garbled,
                format!(
                    "the test run finished, but the verdicts of {unreported} of its tests could \
                     not be read (something else wrote to stdout in the middle of them)"
                ),
            )),
            Ended::Exited(status) => Some((
                Trouble::EndedEarly,
                format!(
                    "the test process ended early ({}) before its summary; {unreported} of its \
                     tests never reported{}",
                    describe_exit(status),
                    last_words(&finished.stderr)
                ),
            )),
        };
        Ok(Ran {
            score,
            problem,
            stdout_bytes: finished.stdout_bytes,
        })
    }

    /// How the test binary runs: capped, and in a group of its own when
    /// grading a class (interactively, Ctrl-C must reach it).
    fn test_settings(&self, wall: Duration) -> Settings {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        Settings {
            wall,
            stderr: Stderr::Capture,
            own_group: !self.interactive,
            caps: Some(Caps {
                memory: MEMORY,
                // Every thread busy for the whole run, and a margin: only a
                // run nobody waits for any more reaches it.
                cpu: wall
                    .saturating_mul(cores)
                    .saturating_add(Duration::from_secs(10)),
            }),
        }
    }

    /// The test binary with a clean environment: no inherited libtest or
    /// insta settings, no backtraces, snapshots never written.
    fn test_command(&self, executable: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(executable);
        command.current_dir(&self.dir).args(args);
        if args.is_empty() {
            command.args(["--color", "never"]);
        }
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("RUST_TEST_") || key_text.starts_with("INSTA_") {
                command.env_remove(&key);
            }
        }
        command
            .env("RUST_BACKTRACE", "0")
            .env("INSTA_UPDATE", "no")
            .env("INSTA_WORKSPACE_ROOT", &self.dir)
            .env("CARGO_MANIFEST_DIR", &self.dir);
        if let Some(tmp) = &self.tmp_dir {
            for key in ["TMPDIR", "TMP", "TEMP"] {
                command.env(key, tmp);
            }
        }
        command
    }
}

/// Cargo itself: the one that started us when there is one (the xtask
/// pattern), else the one on the `PATH`.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// What cargo's JSON messages say about the build.
#[derive(Debug, Default)]
struct CargoMessages {
    executable: Option<PathBuf>,
    library_fresh: Option<bool>,
    first_error: Option<String>,
    compile_failed: bool,
    success: Option<bool>,
}

impl LineSink for CargoMessages {
    // A rendered diagnostic can be long; a longer line is skipped whole.
    const MAX_LINE: usize = 1 << 20;

    fn line(&mut self, line: &str, cut: bool) {
        if cut || !line.starts_with('{') {
            return;
        }
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match message["reason"].as_str() {
            Some("compiler-artifact") => self.artifact(&message),
            Some("compiler-message") => self.diagnostic(&message["message"]),
            Some("build-finished") => self.success = message["success"].as_bool(),
            _ => {}
        }
    }
}

impl CargoMessages {
    fn artifact(&mut self, message: &Value) {
        let target = &message["target"];
        let kinds = target["kind"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let has_kind = |kind: &str| kinds.iter().any(|k| k.as_str() == Some(kind));
        let local = message["package_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("path+"));
        if has_kind("test") && target["name"].as_str() == Some(TEST_TARGET) {
            if let Some(path) = message["executable"].as_str() {
                self.executable = Some(PathBuf::from(path));
            }
        } else if has_kind("lib") && local {
            self.library_fresh = message["fresh"].as_bool();
        }
    }

    fn diagnostic(&mut self, diagnostic: &Value) {
        let level = diagnostic["level"].as_str().unwrap_or_default();
        if !level.starts_with("error") {
            return;
        }
        self.compile_failed = true;
        let text = diagnostic["message"].as_str().unwrap_or_default();
        // The closing "aborting due to…" is a count, not an error to fix.
        if self.first_error.is_some() || text.starts_with("aborting due to") {
            return;
        }
        let rendered = diagnostic["rendered"].as_str().unwrap_or(text);
        self.first_error = Some(cut_at_boundary(rendered.trim_end(), 4000).to_owned());
    }
}

/// "exit status 0", "killed by signal 9", as a person reads it.
fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => " (abort)",
                9 => " (kill: out of memory, or killed from outside)",
                11 => " (segmentation fault)",
                24 => " (processor time limit)",
                25 => " (file too large)",
                _ => "",
            };
            return format!("killed by signal {signal}{name}");
        }
    }
    status.to_string()
}

/// The last line the process wrote to stderr, which says why it died
/// ("memory allocation of … failed", "has overflowed its stack").
fn last_words(stderr: &str) -> String {
    match stderr.lines().rev().find(|line| !line.trim().is_empty()) {
        Some(line) => format!(": {}", cut_at_boundary(line.trim(), 300)),
        None => String::new(),
    }
}

/// The last `count` lines of `text`.
fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}
