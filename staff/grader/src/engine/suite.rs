//! Building the graded suite with cargo and running its test binary.
//!
//! The build is `cargo test --test lab --no-run`, whose JSON messages name
//! the test executable and carry the compiler's errors. The executable is
//! then run directly, not through `cargo test`, so that a timeout kills the
//! tests and nothing else, and so that its output is read as it comes.
//!
//! Both go through the [`Sandbox`] unless grading without one: the build
//! offline (the dependencies are fetched before, outside), the test run with
//! the verdict channel of [`crate::engine::verdicts`]. Verdicts come from that
//! channel only; what the test process prints is kept as its output.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::engine::libtest::{TestList, TestOutput, cut_at_boundary};
use crate::engine::process::{self, Caps, Ended, LineSink, Settings, Stderr};
use crate::engine::sandbox::Sandbox;
use crate::engine::score::{Scope, Score};
use crate::engine::verdicts::{Channel, Verdicts};
use lab_claims::postgres;

/// The graded test target, `tests/lab`.
const TEST_TARGET: &str = "lab";
/// The crate that holds the submission's files: whether cargo rebuilt it
/// tells whether the test binary is this submission's.
const EXERCISES_CRATE: &str = "fencing_lab_exercises";

/// The address space one test run may use. The suite needs a small fraction
/// of it; a loop that allocates is stopped here instead of by the machine.
/// Each process the run starts has the same cap, the etcd track's members
/// too: the lab gives them a quota, so they map a small database instead
/// of etcd's default 10 GiB (`src/etcd/cluster.rs`).
const MEMORY: u64 = 4 << 30;

/// How many processes and threads the sandbox's account may have at once
/// during a test run (the etcd track's three members and the PostgreSQL
/// server's processes included). Only an account other than root is held
/// to it, so only a sandbox started by root sets it.
const PROCESSES: u64 = 256;

/// How long `--list` may take: it runs no test.
const LIST_LIMIT: Duration = Duration::from_secs(30);

/// How long the verdicts may take to arrive once the test process is gone.
const GRACE: Duration = Duration::from_secs(2);

/// A submission's test runs, all rounds together, may take this many times
/// the per-test limit: enough to cut off a few hanging tests one round
/// after the other, not a round per test of a submission where every test
/// hangs.
const ROUNDS_BUDGET: u32 = 4;

/// What one run of the test binary gave.
struct Round {
    ended: Ended,
    verdicts: Verdicts,
    /// The tests that ran past the per-test limit, when that stopped it.
    overdue: Vec<String>,
    output: TestOutput,
    stdout_bytes: u64,
    stderr: String,
}

/// What the rounds of one test run gave, together.
#[derive(Default)]
struct Rounds {
    verdicts: Verdicts,
    output: TestOutput,
    stdout_bytes: u64,
    /// The tests cut off at the per-test limit, or running when the time
    /// ran out.
    hung: Vec<String>,
    /// The tests running when the process ended, and how it ended.
    died: Vec<(String, String)>,
    /// How the process ended, when it ended in a way libtest never does
    /// while no test was left running.
    /// With whether it ran out of processes or memory (the account's cap,
    /// not the code), rather than ended on its own.
    odd_exit: Option<(String, bool)>,
    /// Whether the submission's time for its test runs was spent.
    out_of_time: bool,
    /// How the last round that exited ended, and why, as far as the
    /// process said (see [`how_it_ended`]): what kept the tests that never
    /// began from beginning.
    last_exit: Option<String>,
    /// Whether what the process wrote to stderr may be quoted (see
    /// [`Suite::run`]).
    quote: bool,
}

impl Rounds {
    /// Adds one round, the `first` or a later one.
    fn absorb(&mut self, round: Round, first: bool) {
        self.stdout_bytes += round.stdout_bytes;
        let unfinished = round.verdicts.unfinished();
        match round.ended {
            Ended::Stopped | Ended::TimedOut(_) => {
                let cut: Vec<String> = if matches!(round.ended, Ended::Stopped) {
                    round.overdue
                } else {
                    self.out_of_time = true;
                    unfinished
                };
                self.hung.extend(cut);
            }
            Ended::Exited(status) => {
                self.last_exit = Some(how_it_ended(status, &round.stderr, self.quote));
                let normal = matches!(status.code(), Some(0 | 101));
                if !unfinished.is_empty() || !normal {
                    let how = describe_exit(status);
                    let said = last_words(&round.stderr, self.quote);
                    for test in &unfinished {
                        self.died.push((test.clone(), format!("{how}{said}")));
                    }
                    if unfinished.is_empty() && !normal {
                        self.odd_exit = Some(match ran_out(&round.stderr) {
                            Some(cause) => (format!("{cause}: {how}{said}"), true),
                            None => (format!("{how}{said}"), false),
                        });
                    }
                }
            }
        }
        self.verdicts.absorb(round.verdicts);
        if first {
            self.output = round.output;
        } else {
            self.output.absorb(round.output);
        }
    }

    /// Whether `test` has a verdict, or is known to hang or to end the
    /// process.
    fn settled(&self, test: &str) -> bool {
        self.verdicts.verdict(test).is_some()
            || self.hung.iter().any(|hung| hung == test)
            || self.died.iter().any(|(dead, _)| dead == test)
    }

    /// What kept the run of `graded` from a verdict for each, said in one
    /// text, and whether it was time (or the process ending); `None` when
    /// nothing did.
    fn problem(
        &self,
        graded: &[String],
        unlisted: Option<&str>,
        test_limit: Duration,
        budget: Duration,
    ) -> Option<(Trouble, String)> {
        let mut told = Vec::new();
        if !self.hung.is_empty() {
            told.push(format!(
                "{} tests ran longer than {} s and were cut off: {}",
                self.hung.len(),
                test_limit.as_secs(),
                self.hung.join(", ")
            ));
        }
        if !self.died.is_empty() {
            let mut by_end: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (test, how) in &self.died {
                by_end.entry(how).or_default().push(test);
            }
            for (how, tests) in by_end {
                told.push(format!(
                    "the test process ended ({how}) while these tests ran: {}",
                    tests.join(", ")
                ));
            }
        }
        if let Some((how, true)) = &self.odd_exit {
            told.push(format!("the test process could not go on ({how})"));
        } else if let Some((how, false)) = &self.odd_exit {
            told.push(format!(
                "the test process ended ({how}), which libtest never does on its own (it exits \
                 with 0 or 101 after its last test): something in it ended the process"
            ));
        }
        if let Some(never) = self.never_reported(graded, budget) {
            told.push(never);
        }
        if let Some(why) = unlisted {
            told.push(format!("the test binary could not list its tests: {why}"));
        }
        if told.is_empty() {
            return None;
        }
        let trouble = if !self.hung.is_empty() || self.out_of_time {
            Trouble::TimedOut
        } else {
            Trouble::EndedEarly
        };
        Some((trouble, told.join("; ")))
    }

    /// The tests of `graded` that sent no verdict, neither hung nor running
    /// when the process ended, and why, if there are any.
    fn never_reported(&self, graded: &[String], budget: Duration) -> Option<String> {
        let accounted: BTreeSet<&str> = self
            .hung
            .iter()
            .chain(self.died.iter().map(|(test, _)| test))
            .map(String::as_str)
            .collect();
        let never: Vec<&str> = graded
            .iter()
            .filter(|test| self.verdicts.verdict(test).is_none())
            .map(String::as_str)
            .filter(|test| !accounted.contains(test))
            .collect();
        if never.is_empty() {
            return None;
        }
        let why = if self.out_of_time {
            format!(
                "the submission's time for its test runs ({} s) was spent first",
                budget.as_secs()
            )
        } else if self.verdicts.verdict("main").is_some() {
            // A verdict in the name of libtest's main thread: it could not
            // start a thread for a test (EAGAIN) and ran it on its own,
            // whose name is no test's.
            format!(
                "they never began on a thread of their own: {}; libtest ran them on its \
                 main thread instead, where a verdict cannot name its test",
                out_of_processes()
            )
        } else if let Some(why) = &self.last_exit {
            format!("they never began: {why}")
        } else {
            "they never began".to_owned()
        };
        Some(format!(
            "{} tests never reported ({why}): {}",
            never.len(),
            never.join(", ")
        ))
    }
}

/// Verdicts that count for nothing: for a test the list does not have,
/// or sent twice.
fn strays(verdicts: &Verdicts, listed: Option<&[String]>) -> Vec<String> {
    let mut strays: Vec<String> = verdicts
        .tests()
        .filter(|test| listed.is_some_and(|listed| !listed.iter().any(|known| known == test)))
        .map(|test| format!("{test} (not in the test list)"))
        .collect();
    strays.extend(
        verdicts
            .repeated
            .iter()
            .map(|test| format!("{test} (reported twice)")),
    );
    strays
}

/// Where and how to build and run the suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The package: this checkout, or a class's scratch copy.
    pub dir: PathBuf,
    /// The target directory: shared by a whole class, or the checkout's.
    pub target_dir: PathBuf,
    /// Build with `--features solutions` (the reference).
    pub solutions: bool,
    /// What is graded: the tracks, each built with its feature
    /// (`postgres`, `etcd`, `postgres-sql`) for its tests, and the claims
    /// whose tests are run.
    pub scope: Scope,
    /// Show cargo's progress and rendered diagnostics on stderr, as
    /// `cargo test` would, instead of collecting the first error.
    pub interactive: bool,
    /// The temporary directory of the tests' lab files, or the system's
    /// (in a sandbox, its own private `/tmp`).
    pub tmp_dir: Option<PathBuf>,
    /// A fresh PostgreSQL cluster the test runs copy instead of running
    /// `initdb` (see [`make_pg_template`]), shown read-only in the sandbox.
    pub pg_template: Option<PathBuf>,
    /// Where builds and test runs may look and write; `None` with
    /// `--no-sandbox`.
    pub sandbox: Option<Sandbox>,
    /// The longest a build may take.
    pub build_limit: Duration,
    /// The longest one test may take; a test run's rounds together may take
    /// [`ROUNDS_BUDGET`] times as long.
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
    /// The process exited, or died, before every test sent its verdict.
    EndedEarly,
}

impl Trouble {
    /// A few words for the summary table.
    pub fn short(self) -> &'static str {
        match self {
            Trouble::TimedOut => "timed out",
            Trouble::EndedEarly => "ended early",
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
    /// Lines on the verdict channel that did not carry the run's key.
    pub forged: u64,
    /// Verdicts for tests the list does not have, or sent twice.
    pub strays: Vec<String>,
}

impl Suite {
    /// Builds the graded suite.
    pub fn build(&self) -> Result<Built, String> {
        let mut command = self.build_command()?;
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
        if let Ended::TimedOut(limit) = finished.ended {
            return Ok(Built::TimedOut(limit));
        }
        Ok(self.built(finished))
    }

    /// `cargo test --no-run` for the graded suite, with the graded tracks'
    /// features, in the sandbox if there is one.
    fn build_command(&self) -> Result<Command, String> {
        let mut command = match &self.sandbox {
            Some(sandbox) => {
                let mut sandbox = sandbox.clone();
                sandbox.writable.push(self.target_dir.clone());
                let mut command = sandbox.command(cargo(), &self.dir)?;
                // The sandbox has no network: the dependencies were fetched.
                command.arg("--offline");
                // Nor the run's own variables: a build needs none, and a
                // `#[path]` to `/proc/self/environ` would quote them.
                for key in RUN_ONLY {
                    command.env_remove(key);
                }
                command
            }
            None => Command::new(cargo()),
        };
        command
            .current_dir(&self.dir)
            .args(["test", "--test", TEST_TARGET, "--no-run"])
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"))
            .args(["--message-format=json", "--color", "never"])
            .env("CARGO_TARGET_DIR", &self.target_dir);
        if !self.interactive {
            // The lock file is the lab's: a class builds exactly that. And
            // without the default feature `story`: the `lab` binary is not
            // graded, and building it would cost each submission a compile
            // and a link. (The learner's `cargo grade` keeps it, so that its
            // build is the one `cargo test` already made.)
            command.args(["--locked", "--no-default-features"]);
            // The manifest's profile for grading: no debug info, an
            // optimised SQLite (see `[profile.grade]` in Cargo.toml).
            command.args(["--profile", "grade"]);
        }
        let features: Vec<&str> = [
            (self.solutions, "solutions"),
            (self.scope.tracks.postgres, "postgres"),
            (self.scope.tracks.etcd, "etcd"),
            (self.scope.tracks.postgres_sql, "postgres-sql"),
        ]
        .into_iter()
        .filter_map(|(on, feature)| on.then_some(feature))
        .collect();
        if !features.is_empty() {
            command.args(["--features", &features.join(",")]);
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
        Ok(command)
    }

    /// What a finished build gave, from cargo's messages.
    fn built(&self, finished: process::Finished<CargoMessages>) -> Built {
        let messages = finished.sink;
        match (messages.executable, messages.first_error) {
            (_, Some(error)) => Built::CompileError(error),
            (Some(path), None) if messages.success != Some(false) => Built::Executable {
                path,
                library_fresh: messages.library_fresh.unwrap_or(false),
            },
            _ if messages.compile_failed => Built::CompileError(String::new()),
            _ => {
                let how = match &finished.ended {
                    Ended::Exited(status) => format!(" ({status})"),
                    _ => String::new(),
                };
                let said = last_lines(&finished.stderr, 12);
                Built::Failed(if !said.trim().is_empty() {
                    format!("cargo failed without a compiler error{how}:\n{said}")
                } else if self.interactive {
                    format!("cargo failed without a compiler error{how}; what it said is above")
                } else {
                    format!(
                        "cargo failed without a compiler error{how}, and said nothing on stderr"
                    )
                })
            }
        }
    }

    /// Downloads the dependencies the lock file names, outside the sandbox
    /// (which has no network); quick when they are there already. Runs only
    /// cargo: no code of a submission is built or run.
    pub fn fetch(&self) -> Result<(), String> {
        if self.sandbox.is_none() {
            return Ok(());
        }
        let mut command = Command::new(cargo());
        command
            .current_dir(&self.dir)
            .arg("fetch")
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"));
        if !self.interactive {
            command.arg("--locked");
        }
        let output = command
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|error| format!("cannot run cargo: {error}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cannot fetch the lab's dependencies:\n{}",
                last_lines(&String::from_utf8_lossy(&output.stderr), 12)
            ))
        }
    }

    /// Lists the suite's tests, then runs them: all at once first, then, if
    /// some hung or the process died, the ones without a result again, in
    /// rounds, until each has a verdict or is known to hang or to end the
    /// process. A test that runs past [`Suite::test_limit`] is cut off
    /// alone: the others get their verdicts in the next round, so the same
    /// code scores the same with 2 test threads or 16.
    ///
    /// Without `quote`, nothing the process wrote to stderr is quoted in
    /// what the run says of how it ended: for a submission on hold, whose
    /// code may have read what it should not have.
    pub fn run(&self, executable: &Path, quote: bool) -> Result<Ran, String> {
        // Without the list, a test that never reports would go unnoticed
        // and its claim could pass on its other tests alone.
        let (listed, unlisted) = match self.list(executable, quote)? {
            Ok(names) => (Some(names), None),
            Err(why) => (None, Some(why)),
        };
        // Only a test of a claim sends a verdict (the transcripts' do not),
        // and only a graded track's are run: `postgres-sql` builds the
        // PostgreSQL track's tests too.
        let graded: Vec<String> = listed.as_ref().map_or_else(Vec::new, |listed| {
            listed
                .iter()
                .filter(|test| self.scope.test_graded(test))
                .cloned()
                .collect()
        });
        let budget = self.test_limit.saturating_mul(ROUNDS_BUDGET);
        let rounds = self.rounds(executable, listed.is_some(), &graded, budget, quote)?;
        let score = Score::of_run(
            self.scope,
            listed.as_deref(),
            &rounds.verdicts,
            &rounds.output,
        );
        Ok(Ran {
            score,
            problem: rounds.problem(&graded, unlisted.as_deref(), self.test_limit, budget),
            stdout_bytes: rounds.stdout_bytes,
            forged: rounds.verdicts.forged,
            strays: strays(&rounds.verdicts, listed.as_deref()),
        })
    }

    /// The tests the binary lists (`--list`), or how the listing ended
    /// when it cannot list them (see [`how_it_ended`]).
    fn list(&self, executable: &Path, quote: bool) -> Result<Result<Vec<String>, String>, String> {
        let listed = process::run::<TestList>(
            &mut self.test_command(executable, &["--list"])?,
            self.test_settings(LIST_LIMIT),
        )
        .map_err(|error| format!("cannot run the test binary: {error}"))?;
        Ok(match listed.ended {
            Ended::Exited(status) if status.success() && !listed.sink.names.is_empty() => {
                Ok(listed.sink.names)
            }
            Ended::Exited(status) => Err(how_it_ended(status, &listed.stderr, quote)),
            Ended::TimedOut(limit) => Err(format!("it took longer than {} s", limit.as_secs())),
            Ended::Stopped => Err("it was stopped".to_owned()),
        })
    }

    /// Runs the `graded` tests in rounds, within `budget` in all: again
    /// the ones without a result, while a round settles one of them and
    /// the tests are `listed`.
    fn rounds(
        &self,
        executable: &Path,
        listed: bool,
        graded: &[String],
        budget: Duration,
        quote: bool,
    ) -> Result<Rounds, String> {
        let started = Instant::now();
        let mut rounds = Rounds {
            quote,
            ..Rounds::default()
        };
        let mut first = true;
        // The first round runs the graded tests by name when the list is
        // known: the transcripts send no verdict, and the etcd chapter's
        // story alone takes seconds (a cluster, a leader kill, a lapsed
        // lease) that would count for nothing.
        let mut pending: Option<Vec<String>> =
            (listed && !graded.is_empty()).then(|| graded.to_vec());
        loop {
            let left = budget.saturating_sub(started.elapsed());
            let round = self.round(executable, pending.as_deref(), left)?;
            let this_round: Vec<String> = pending.clone().unwrap_or_else(|| graded.to_vec());
            rounds.absorb(round, first);
            first = false;
            let next: Vec<String> = graded
                .iter()
                .filter(|test| !rounds.settled(test))
                .cloned()
                .collect();
            let progressed = this_round.iter().any(|test| rounds.settled(test));
            if next.is_empty() || !listed || !progressed {
                break;
            }
            if started.elapsed() >= budget {
                rounds.out_of_time = true;
                break;
            }
            pending = Some(next);
        }
        Ok(rounds)
    }

    /// One run of the test binary: every test (`only` is `None`), or just
    /// the named ones; stopped when a test runs past the per-test limit, or
    /// when `left` is spent.
    fn round(
        &self,
        executable: &Path,
        only: Option<&[String]>,
        left: Duration,
    ) -> Result<Round, String> {
        let channel =
            Channel::open().map_err(|error| format!("cannot open the verdict channel: {error}"))?;
        let mut args: Vec<&str> = Vec::new();
        if let Some(only) = only {
            args.push("--exact");
            args.extend(only.iter().map(String::as_str));
        }
        let mut command = self.test_command(executable, &args)?;
        channel.pass_to(&mut command);
        let listening = channel.listen();
        let limit = self.test_limit;
        let mut overdue = Vec::new();
        let mut stop = || {
            overdue = listening.overdue(limit);
            !overdue.is_empty()
        };
        let finished = process::run_watched::<TestOutput>(
            &mut command,
            self.test_settings(left.max(Duration::from_secs(1))),
            &mut stop,
        )
        .map_err(|error| format!("cannot run the test binary: {error}"))?;
        let verdicts = listening.finish(GRACE);
        Ok(Round {
            ended: finished.ended,
            verdicts,
            overdue,
            output: finished.sink,
            stdout_bytes: finished.stdout_bytes,
            stderr: finished.stderr,
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
                processes: self
                    .sandbox
                    .as_ref()
                    .and_then(|sandbox| crate::engine::accounts::of(sandbox.worker).ok().flatten())
                    .map(|_| PROCESSES),
            }),
        }
    }

    /// The test binary with a clean environment: no inherited libtest or
    /// insta settings, no backtraces, snapshots never written.
    fn test_command(&self, executable: &Path, args: &[&str]) -> Result<Command, String> {
        let mut command = match &self.sandbox {
            Some(sandbox) => {
                let mut sandbox = sandbox.clone();
                sandbox.readable.push(self.target_dir.clone());
                sandbox.readable.extend(self.pg_template.iter().cloned());
                sandbox.command(executable, &self.dir)?
            }
            None => Command::new(executable),
        };
        command.current_dir(&self.dir).args(args);
        if args.is_empty() {
            command.args(["--color", "never"]);
        }
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            // RUST_TEST_THREADS stays: a hanging test is cut off alone, so
            // the score does not depend on it, only the time.
            let threads = key_text == "RUST_TEST_THREADS";
            if (key_text.starts_with("RUST_TEST_") && !threads) || key_text.starts_with("INSTA_") {
                command.env_remove(&key);
            }
        }
        command
            .env("RUST_BACKTRACE", "0")
            .env("INSTA_UPDATE", "no")
            .env("INSTA_WORKSPACE_ROOT", &self.dir)
            .env("CARGO_MANIFEST_DIR", &self.dir);
        if let Some(template) = &self.pg_template {
            command.env(PG_TEMPLATE_VARIABLE, template);
        }
        if let Some(tmp) = self.tmp_dir.as_ref().filter(|_| self.sandbox.is_none()) {
            for key in ["TMPDIR", "TMP", "TEMP"] {
                command.env(key, tmp);
            }
        }
        Ok(command)
    }
}

/// The lab's variable naming a cluster to copy instead of running `initdb`
/// (`TEMPLATE_VARIABLE` in the lab's `src/pg/server.rs`).
const PG_TEMPLATE_VARIABLE: &str = "FENCING_LAB_PG_TEMPLATE";

/// Makes the fresh cluster a worker's test runs copy: `initdb` in the
/// worker's sandbox, with the options and the user of the lab's own
/// (`lab_claims::postgres`, which the lab's server uses too), into
/// `dir/cluster`. It runs no code of a submission; the test runs see it
/// read-only, so none can change it for the next. Returns the cluster's
/// path, or `None` where `initdb` is not installed (the lab then says so).
pub fn make_pg_template(sandbox: &Sandbox, dir: &Path) -> Result<Option<PathBuf>, String> {
    let Some(bin) = postgres::programs() else {
        return Ok(None);
    };
    let cluster = dir.join("cluster");
    let mut sandbox = sandbox.clone();
    sandbox.writable.push(dir.to_path_buf());
    let mut command = sandbox.command(bin.join("initdb"), dir)?;
    command
        .args(postgres::INITDB_OPTIONS)
        .args(["--username", postgres::USER, "--pgdata"])
        .arg(&cluster)
        .stdin(std::process::Stdio::null());
    let output = command
        .output()
        .map_err(|error| format!("cannot run initdb: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "initdb failed ({}):\n{}",
            output.status,
            last_lines(&String::from_utf8_lossy(&output.stderr), 12)
        ));
    }
    Ok(Some(cluster))
}

/// Cargo itself: the one that started us when there is one (the xtask
/// pattern), else the one on the `PATH`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The variables of [`crate::engine::sandbox::ENVIRONMENT`] only a test run needs,
/// dropped from a build's environment.
const RUN_ONLY: &[&str] = &[
    "RUST_TEST_THREADS",
    "FENCING_LAB_PG_URL",
    "FENCING_LAB_SEED",
    "FENCING_LAB_THOROUGH",
];

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
        } else if has_kind("lib") && local && target["name"].as_str() == Some(EXERCISES_CRATE) {
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
        let rendered = unquoted_outside(diagnostic["rendered"].as_str().unwrap_or(text));
        self.first_error = Some(cut_at_boundary(rendered.trim_end(), 4000).to_owned());
    }
}

/// A rendered diagnostic without the lines it quotes from a file outside
/// the lab. Cargo names a file of the lab relative to it and any other by
/// its absolute path; rustc quotes the text of a file a `#[path]` leads to
/// (`/proc/self/environ`: the build's environment), and no report may.
fn unquoted_outside(rendered: &str) -> String {
    let mut kept = Vec::new();
    let mut outside = false;
    for line in rendered.lines() {
        let trimmed = line.trim_start();
        if line.starts_with(|c: char| c.is_alphabetic()) {
            // A new diagnostic or note: `error: …`, `note: …`.
            outside = false;
        } else if let Some(path) = trimmed
            .strip_prefix("--> ")
            .or_else(|| trimmed.strip_prefix("::: "))
        {
            outside = path.starts_with('/');
            kept.push(line.to_owned());
            if outside {
                kept.push("   (the file is outside the lab: its lines are not quoted)".to_owned());
            }
            continue;
        }
        let quoted = trimmed.starts_with('|')
            || trimmed == "..."
            || trimmed
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start()
                .starts_with('|');
        if !(outside && quoted) {
            kept.push(line.to_owned());
        }
    }
    kept.join("\n")
}

/// "exit status 0", "killed by signal 9", as a person reads it.
fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        // bwrap exits with 128 + N when the process in it died of signal N.
        return match code.checked_sub(128).and_then(signal_name) {
            Some(name) => format!("exit status {code}: signal {}{name}", code - 128),
            None => format!("exit status {code}"),
        };
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = signal_name(signal).unwrap_or("");
            return format!("killed by signal {signal}{name}");
        }
    }
    status.to_string()
}

/// What a signal that ends a test run usually means.
fn signal_name(signal: i32) -> Option<&'static str> {
    match signal {
        6 => Some(" (abort)"),
        9 => Some(" (kill: out of memory, or killed from outside)"),
        11 => Some(" (segmentation fault)"),
        24 => Some(" (processor time limit)"),
        25 => Some(" (file too large)"),
        _ => None,
    }
}

/// How a test process ended, for the tests it never began: what it ran
/// out of, when its stderr says (out of processes: the account's cap met;
/// out of memory), its exit, and its last words.
fn how_it_ended(status: std::process::ExitStatus, stderr: &str, quote: bool) -> String {
    let cause = ran_out(stderr).map_or_else(String::new, |cause| format!("{cause}, "));
    let said = last_words(stderr, quote);
    let said = if said.is_empty() {
        ", with nothing on stderr".to_owned()
    } else {
        said
    };
    format!(
        "{cause}the test process ended with {}{said}",
        describe_exit(status)
    )
}

/// What the process ran out of, when its stderr says: processes (the
/// account's cap met, `EAGAIN` on a fork, a thread or `execve`), or memory.
fn ran_out(stderr: &str) -> Option<String> {
    let lower = stderr.to_lowercase();
    let met = |needles: &[&str]| needles.iter().any(|needle| lower.contains(needle));
    if met(&[
        "resource temporarily unavailable",
        "os error 11)",
        "failed to spawn thread",
    ]) {
        Some(out_of_processes())
    } else if met(&[
        "cannot allocate memory",
        "os error 12)",
        "memory allocation of",
        "out of memory",
    ]) {
        Some("out of memory".to_owned())
    } else {
        None
    }
}

/// What the account's cap on processes, met, means.
fn out_of_processes() -> String {
    format!(
        "out of processes: the sandbox's account may have {PROCESSES} processes and threads at \
         once, and had them all"
    )
}

/// The last line the process wrote to stderr, which says why it died
/// ("memory allocation of … failed", "has overflowed its stack"), past the
/// advice about backtraces that follows a panic. Without `quote`, only
/// that there is such a line.
fn last_words(stderr: &str, quote: bool) -> String {
    let said = |line: &&&str| {
        let line = line.trim();
        !line.is_empty() && !line.starts_with("note: run with `RUST_BACKTRACE")
    };
    let lines: Vec<&str> = stderr.lines().collect();
    let why = lines
        .iter()
        .rev()
        .find(|line| line.starts_with("memory allocation of"))
        .or_else(|| lines.iter().rev().find(said));
    match why {
        Some(_) if !quote => {
            ": what it last wrote to stderr is not quoted while the submission is on hold for \
             review"
                .to_owned()
        }
        Some(line) => format!(": {}", cut_at_boundary(line.trim(), 300)),
        None => String::new(),
    }
}

/// The last `count` lines of `text`.
fn last_lines(text: &str, count: usize) -> String {
    // Blank lines say nothing: a message never ends on an empty colon.
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_outside_the_lab_is_not_quoted() {
        let environ = "error: unknown start of token: \\u{0}\n --> /proc/self/environ:1:24\n  |\n\
                       1 | CARGO_HOME=/c\u{2400}SECRET=hunter2\n  |   ^\n  |\n  = help: source files \
                       must contain UTF-8 encoded text\nnote: the lab's own\n --> src/lib.rs:3:1\n  \
                       |\n3 | mod exercises;\n  | ^^^\n";
        let told = unquoted_outside(environ);
        assert!(!told.contains("SECRET"), "{told}");
        assert!(told.contains("/proc/self/environ:1:24"), "{told}");
        assert!(told.contains("its lines are not quoted"), "{told}");
        assert!(told.contains("= help: source files"), "{told}");
        assert!(told.contains("3 | mod exercises;"), "{told}");
    }

    #[cfg(unix)]
    fn exit(code: i32) -> std::process::ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        std::process::ExitStatus::from_raw(code << 8)
    }

    #[cfg(unix)]
    #[test]
    fn a_test_process_that_never_began_says_what_it_ran_out_of() {
        let exec = "setpriv: failed to execute /w/lab-1: Resource temporarily unavailable\n";
        let told = how_it_ended(exit(126), exec, true);
        assert!(told.starts_with("out of processes: "), "{told}");
        assert!(told.contains("exit status 126: setpriv: failed"), "{told}");
        let thread = "thread 'main' panicked at library/test/src/lib.rs:1:1:\nfailed to spawn \
                      thread to run test: Resource temporarily unavailable (os error 11)\n";
        assert!(how_it_ended(exit(101), thread, true).starts_with("out of processes"));
        let memory = "memory allocation of 1073741824 bytes failed\n";
        assert!(how_it_ended(exit(134), memory, true).starts_with("out of memory, "));
        assert_eq!(
            how_it_ended(exit(0), "", true),
            "the test process ended with exit status 0, with nothing on stderr"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_submission_on_hold_has_its_last_words_withheld() {
        let said = "SECRET read from the grader's files\n";
        let withheld = how_it_ended(exit(1), said, false);
        assert!(!withheld.contains("SECRET"), "{withheld}");
        assert!(
            withheld.contains("not quoted while the submission is on hold"),
            "{withheld}"
        );
        // What it ran out of is the grader's own reading, and stays.
        let memory = "memory allocation of 1073741824 bytes failed\n";
        let told = how_it_ended(exit(134), memory, false);
        assert!(told.starts_with("out of memory, "), "{told}");
        assert!(!told.contains("1073741824"), "{told}");
    }
}
