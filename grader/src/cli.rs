//! The command line: no arguments for a learner's scorecard,
//! `--submissions DIR --out OUTDIR` for a class, `--merge` for shards.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::claims::Track;
use crate::class;
use crate::output::Shard;

/// The help text.
pub const USAGE: &str = "\
grade: the fencing-lab grader

usage:
  cargo grade [--solutions] [--postgres] [--etcd] [--postgres-sql]
      grade this checkout's exercises and print a scorecard
      (--solutions: the reference in solutions/ instead)
  cargo grade (--lesson L3 | --claim L3.2) [--postgres] [--etcd] [--postgres-sql]
      the scorecard of one lesson or claim: exits 0 when it earns all its
      points (a grading step per part gives partial credit)
  cargo grade --gradescope FILE [...]
      the scorecard, also written to FILE in Gradescope's results.json format
  cargo grade --classroom[=lessons] [--postgres] [--etcd] [--postgres-sql]
      print the GitHub Classroom workflow: a step per claim (or lesson) worth
      its points (autograders/classroom.yml is its SQLite copy)
  cargo grade --watch [--postgres] [--etcd] [--postgres-sql]
      grade again each time a file under exercises/ is saved: a bar per
      lesson, the next failing claim, its step and hint; keys h (next level
      of the hint), r (run again), s (the reference for a lesson at full
      marks), x (reset a file to its stub), q (quit)
  cargo grade --explain LESSON [--postgres | --etcd | --postgres-sql]
      once LESSON (L3) is at full marks: the reference's lines for it beside
      your function, and the mistakes its claims catch. Refused before: the
      reference would give away what is left to find
  cargo grade --reset FILE [--yes]
      put the stub of one exercise file (exercises/apply.rs) back, after a
      y/N question (--yes: without); yours is kept as FILE.bak
  cargo grade --submissions DIR --out OUTDIR [--shard K/N] [--expect FILE]
      grade a class: every folder of DIR is one submission, holding
      exercises/apply.rs and exercises/install_generation.rs, or the files alone
  cargo grade --hint CLAIM [LEVEL] [--postgres | --etcd | --postgres-sql]
      the next level of the hint a failing step of CLAIM (L4.9) asked: a
      failure prints level 1, a question; this prints level 2, then 3, the
      answer (or LEVEL, 1 to 3). It runs the claim's tests to find the step
  cargo grade --claims
      every claim's statement, lesson by lesson: what each test expects
  cargo grade --merge SHARD_OUT... --out OUTDIR [--expect FILE]
      merge the output folders of a class graded in shards into one, the same
      bytes as grading it in one go

  every build and test run goes through a bubblewrap sandbox (Debian package
  bubblewrap): no network, nothing of the lab, the class or the output folder
  visible but the submission's own scratch copy, and no process left behind.

  with --postgres, the PostgreSQL track is graded too, on its own:
  exercises/postgres/apply.rs and exercises/postgres/install_generation.rs
  (postgres/apply.rs and postgres/install_generation.rs beside the files alone)

  with --etcd, the etcd track is graded too, on its own: exercises/etcd/worker.rs
  (etcd/worker.rs beside the files alone), whose worker calls the submission's
  SQLite exercises; it needs the program etcd (Debian package etcd-server), and
  protoc (protobuf-compiler) to build. --postgres and --etcd may be given
  together: SQLite, PostgreSQL, then etcd

  with --postgres-sql, lesson 8 is graded too, on its own: the contract as
  two PL/pgSQL functions and the grants of who may call them, in
  exercises/postgres/contract.sql (postgres/contract.sql beside the files
  alone), on the PostgreSQL server; it comes after the other tracks

options:
  --submissions DIR     the class, one folder per submission
  --out OUTDIR          where gradebook.csv, index.html (the class report),
                        class.json, <submission>/results.json and the reusable
                        work folder (.work/) go; one grade at a time, and never
                        inside a submission. The dependencies are built once
                        per lock file and toolchain, into the lab's
                        target/grade-cache/, and copied from there
  --shard K/N           grade only the K-th of N slices of the class (by name)
  --merge SHARD_OUT...  merge these shard output folders into OUTDIR
  --expect FILE         compare gradebook.csv with FILE byte for byte; exit 1 if
                        they differ
  --timeout SECS        the longest one test run may take (default 60)
  --build-timeout SECS  the longest one build may take (default 600)
  --solutions           grade the reference instead of this checkout's exercises
  --postgres            grade the PostgreSQL track too
  --etcd                grade the etcd track too
  --postgres-sql        grade lesson 8, the SQL functions, too
  --lesson L3           grade one lesson's claims only (exit 0: all its points)
  --claim L3.2          grade one claim only (exit 0: all its points)
  --gradescope FILE     also write the scorecard to FILE as Gradescope's
                        results.json
  --classroom[=lessons] print the GitHub Classroom workflow, a step per claim
                        (or per lesson)
  --accept NAME         count the points of the submission NAME although the
                        review put it on hold (its source names what
                        grader/allowlist.txt does not have); read the lines
                        its report quotes first. May be given more than once
  -j, --jobs N          grade N submissions at once, each in its own work
                        folder (default: one per core, at most 4, and no more
                        than free memory allows at 2 GiB each; as root,
                        no more than there are sandbox accounts
                        (fencing-grader, fencing-grader-2, ...); 1 with
                        a server track; the grader says which limit
                        chose it); the outputs are the same for every N
  --no-sandbox          run submissions without the sandbox, said in every
                        report (for machines where bubblewrap cannot run)
  -h, --help            print this text
";

/// What to do.
#[derive(Debug)]
pub enum Mode {
    /// Print the help text.
    Help,
    /// Grade this checkout's exercises.
    Checkout {
        /// The reference instead (`--solutions`).
        solutions: bool,
        /// The test run's wall-clock limit.
        test_limit: Duration,
        /// The build's wall-clock limit.
        build_limit: Duration,
        /// Whether the runs go through the sandbox.
        sandbox: bool,
        /// Grade again on every save (`--watch`).
        watch: bool,
    },
    /// Grade a class.
    Class(class::Options),
    /// The next level of a claim's (or a named) hint.
    Hint {
        /// A claim's id (`L4.9`) or a hint's (`replay-applied-again`).
        what: String,
        /// The level asked for; the next one when `None`.
        level: Option<usize>,
        /// The track whose tests are run.
        track: Track,
    },
    /// Every claim's statement.
    Claims,
    /// A lesson at full marks: the reference's lines beside the learner's.
    Explain {
        /// A lesson (`L3`) or one of its claims.
        what: String,
        /// The track it is shown for.
        track: Track,
        /// The test run's wall-clock limit.
        test_limit: Duration,
        /// The build's wall-clock limit.
        build_limit: Duration,
        /// Whether the runs go through the sandbox.
        sandbox: bool,
    },
    /// One exercise file back to its stub.
    Reset {
        /// The file, as given.
        file: String,
        /// Without asking (`--yes`).
        yes: bool,
    },
    /// The GitHub Classroom workflow (`--classroom`), a step per claim or,
    /// `by_lesson`, per lesson.
    Classroom {
        /// One step per lesson (`--classroom=lessons`).
        by_lesson: bool,
    },
    /// Merge shards.
    Merge {
        /// The shards' output folders.
        shards: Vec<PathBuf>,
        /// The merged output folder.
        out: PathBuf,
        /// A gradebook the result must equal.
        expect: Option<PathBuf>,
    },
}

/// Reads the arguments. `--postgres` and `--etcd` take effect here, for
/// every mode.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Mode, String> {
    use lexopt::prelude::*;

    let mut parser = lexopt::Parser::from_args(args);
    let (mut submissions, mut out, mut expect) = (None, None, None);
    let mut test_limit = Duration::from_secs(60);
    let mut build_limit = Duration::from_secs(600);
    let (mut solutions, mut sandbox, mut shard) = (false, true, None);
    let mut watch = false;
    let mut merge: Option<Vec<PathBuf>> = None;
    let (mut hint, mut level, mut track) = (None::<String>, None, Track::Sqlite);
    let mut accept = Vec::new();
    let mut jobs = None;
    let (mut explain, mut reset, mut yes) = (None::<String>, None::<String>, false);
    // `--lesson`, `--claim`, `--gradescope` and `--classroom` (see
    // `crate::part`, `crate::gradescope`, `crate::classroom`).
    let (mut part, mut gradescope, mut classroom) = (None, false, None);
    while let Some(arg) = parser.next().map_err(message)? {
        match arg {
            Short('h') | Long("help") => return Ok(Mode::Help),
            Long("claims") => return Ok(Mode::Claims),
            Long("hint") => {
                hint = Some(
                    parser
                        .value()
                        .map_err(message)?
                        .to_string_lossy()
                        .into_owned(),
                )
            }
            Value(value) if hint.is_some() && level.is_none() => {
                let text = value.to_string_lossy();
                level = match text.parse::<usize>() {
                    Ok(number @ 1..=3) => Some(number),
                    _ => return Err(format!("a hint's level is 1, 2 or 3, not {text:?}")),
                };
            }
            Long("submissions") => {
                submissions = Some(PathBuf::from(parser.value().map_err(message)?))
            }
            Long("out") => out = Some(PathBuf::from(parser.value().map_err(message)?)),
            Long("expect") => expect = Some(PathBuf::from(parser.value().map_err(message)?)),
            Long("timeout") => test_limit = seconds(&mut parser, "--timeout")?,
            Long("build-timeout") => build_limit = seconds(&mut parser, "--build-timeout")?,
            Long("solutions") => solutions = true,
            Long("explain") => {
                explain = Some(parser.value().map_err(message)?.string().map_err(message)?)
            }
            Long("reset") => {
                reset = Some(parser.value().map_err(message)?.string().map_err(message)?)
            }
            Long("yes") => yes = true,
            Long(flag @ ("lesson" | "claim")) => {
                let by_lesson = flag == "lesson";
                let value = parser.value().map_err(message)?;
                let text = value.to_string_lossy();
                let selected = if by_lesson {
                    crate::part::Part::lesson(&text)?
                } else {
                    crate::part::Part::claim(&text)?
                };
                crate::part::select(selected)?;
                part = Some(selected);
            }
            Long("gradescope") => {
                crate::gradescope::write_to(PathBuf::from(parser.value().map_err(message)?))?;
                gradescope = true;
            }
            Long("classroom") => {
                classroom = Some(match parser.optional_value() {
                    None => false,
                    Some(value) if value == "lessons" => true,
                    Some(value) => {
                        return Err(format!(
                            "--classroom takes no value or =lessons, not {value:?}"
                        ));
                    }
                })
            }
            Long("watch") => watch = true,
            Long("postgres") => {
                crate::score::grade_postgres();
                track = Track::Postgres;
            }
            Long("etcd") => {
                crate::score::grade_etcd();
                track = Track::Etcd;
            }
            Long("postgres-sql") => {
                crate::score::grade_postgres_sql();
                track = Track::PostgresSql;
            }
            Long("no-sandbox") => sandbox = false,
            Short('j') | Long("jobs") => {
                let value = parser.value().map_err(message)?;
                let text = value.to_string_lossy();
                jobs = match text.parse::<usize>() {
                    Ok(count @ 1..=64) => Some(count),
                    _ => {
                        return Err(format!(
                            "-j takes a number of submissions from 1 to 64, not {text:?}"
                        ));
                    }
                };
            }
            Long("accept") => accept.push(
                parser
                    .value()
                    .map_err(message)?
                    .into_string()
                    .map_err(|name| format!("--accept takes a submission's name, not {name:?}"))?,
            ),
            Long("shard") => {
                let value = parser.value().map_err(message)?;
                shard = Some(Shard::parse(&value.to_string_lossy())?);
            }
            Long("merge") => {
                let values = parser.values().map_err(message)?;
                merge
                    .get_or_insert_with(Vec::new)
                    .extend(values.map(PathBuf::from));
            }
            _ => return Err(message(arg.unexpected())),
        }
    }
    if let Some(by_lesson) = classroom {
        return Ok(Mode::Classroom { by_lesson });
    }
    if (part.is_some() || gradescope)
        && (watch || hint.is_some() || submissions.is_some() || merge.is_some())
    {
        return Err(
            "--lesson, --claim and --gradescope are for this checkout's scorecard".to_owned(),
        );
    }
    if let Some(part) = part {
        part.check_on(crate::score::tracks())?;
    }
    if let Some(what) = hint {
        return Ok(Mode::Hint { what, level, track });
    }
    if let Some(file) = reset {
        return Ok(Mode::Reset { file, yes });
    }
    if let Some(what) = explain {
        if solutions {
            return Err(
                "--explain compares your exercises with the reference, not with --solutions"
                    .to_owned(),
            );
        }
        return Ok(Mode::Explain {
            what,
            track,
            test_limit,
            build_limit,
            sandbox,
        });
    }
    if watch && (submissions.is_some() || out.is_some() || merge.is_some()) {
        return Err("--watch is for this checkout's scorecard, not for a class".to_owned());
    }
    if !accept.is_empty() && submissions.is_none() {
        return Err("--accept is for a class graded with --submissions".to_owned());
    }
    if solutions && (submissions.is_some() || merge.is_some()) {
        return Err("--solutions is for the scorecard, not for a class".to_owned());
    }
    if let Some(shards) = merge {
        return match (out, submissions, shard) {
            (Some(out), None, None) => Ok(Mode::Merge {
                shards,
                out,
                expect,
            }),
            (None, _, _) => {
                Err("--merge needs --out OUTDIR: where the merged class goes".to_owned())
            }
            _ => Err(
                "--merge takes the shards' output folders, not --submissions or --shard".to_owned(),
            ),
        };
    }
    match (submissions, out) {
        (Some(submissions), Some(out)) => Ok(Mode::Class(class::Options {
            submissions,
            out,
            test_limit,
            build_limit,
            expect,
            sandbox,
            shard: shard.unwrap_or(Shard::WHOLE),
            accept,
            jobs,
        })),
        (Some(_), None) => {
            Err("--submissions needs --out OUTDIR: where to write the gradebook".to_owned())
        }
        (None, Some(_)) => Err("--out needs --submissions DIR: the class to grade".to_owned()),
        (None, None) if expect.is_some() || shard.is_some() => {
            Err("--expect and --shard need --submissions DIR and --out OUTDIR".to_owned())
        }
        (None, None) => Ok(Mode::Checkout {
            solutions,
            test_limit,
            build_limit,
            sandbox,
            watch,
        }),
    }
}

/// A whole number of seconds, from one second to one day.
fn seconds(parser: &mut lexopt::Parser, flag: &str) -> Result<Duration, String> {
    const DAY: u64 = 24 * 60 * 60;
    let value = parser.value().map_err(message)?;
    let text = value.to_string_lossy();
    match text.parse::<u64>() {
        Ok(seconds) if (1..=DAY).contains(&seconds) => Ok(Duration::from_secs(seconds)),
        _ => Err(format!(
            "{flag} takes a whole number of seconds from 1 to {DAY}, not {text:?}"
        )),
    }
}

/// lexopt's messages start with a capital letter; ours do not.
fn message(error: lexopt::Error) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}
