//! The command line: no arguments for a learner's scorecard,
//! `--submissions DIR --out OUTDIR` for a class, `--merge` for shards.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::lesson_or_claim::Part;
use crate::engine::score::{Scope, Tracks};
use crate::instructor::class;
use crate::instructor::gradescope;
use crate::instructor::output::Shard;
use crate::learner::scorecard;
use lab_claims::Track;

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
      its points (staff/autograders/classroom.yml is its SQLite copy)
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
  --fill FILE           grade only the claims whose columns the gradebook FILE
                        lacks (a claim just added), and write FILE with them
                        added to OUTDIR/gradebook.csv
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
                        staff/grader/allowlist.txt does not have); read the lines
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
    /// Grade this checkout's exercises and print the scorecard.
    Checkout {
        /// How.
        options: scorecard::Options,
        /// Where to write it in Gradescope's format too (`--gradescope`).
        gradescope: Option<gradescope::Target>,
    },
    /// Grade this checkout again on every save (`--watch`).
    Watch(scorecard::Options),
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
        /// How this checkout is graded first.
        options: scorecard::Options,
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
        /// The tracks it grades.
        tracks: Tracks,
    },
    /// Merge shards.
    Merge {
        /// The shards' output folders.
        shards: Vec<PathBuf>,
        /// The merged output folder.
        out: PathBuf,
        /// A gradebook the result must equal.
        expect: Option<PathBuf>,
        /// The tracks the shards graded.
        tracks: Tracks,
    },
}

/// Reads the arguments. The track flags (`--postgres`, `--etcd`,
/// `--postgres-sql`) count for every mode that grades.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Mode, String> {
    use lexopt::prelude::*;

    let mut parser = lexopt::Parser::from_args(args);
    let mut given = Given::default();
    while let Some(arg) = parser.next().map_err(message)? {
        match arg {
            Short('h') | Long("help") => return Ok(Mode::Help),
            Long("claims") => return Ok(Mode::Claims),
            Long("hint") => given.hint = Some(lossy(&mut parser)?),
            Value(value) if given.hint.is_some() && given.level.is_none() => {
                given.level = Some(hint_level(&value.to_string_lossy())?);
            }
            Long("submissions") => given.submissions = Some(path(&mut parser)?),
            Long("out") => given.out = Some(path(&mut parser)?),
            Long("expect") => given.expect = Some(path(&mut parser)?),
            Long("fill") => given.fill = Some(path(&mut parser)?),
            Long("timeout") => given.test_limit = seconds(&mut parser, "--timeout")?,
            Long("build-timeout") => given.build_limit = seconds(&mut parser, "--build-timeout")?,
            Long("solutions") => given.solutions = true,
            Long("explain") => given.explain = Some(string(&mut parser)?),
            Long("reset") => given.reset = Some(string(&mut parser)?),
            Long("yes") => given.yes = true,
            Long(flag @ ("lesson" | "claim")) => {
                let by_lesson = flag == "lesson";
                given.select(by_lesson, &lossy(&mut parser)?)?;
            }
            Long("gradescope") => given.write_gradescope(path(&mut parser)?)?,
            Long("classroom") => given.classroom = Some(classroom(parser.optional_value())?),
            Long("watch") => given.watch = true,
            Long("postgres") => given.grade(Track::Postgres),
            Long("etcd") => given.grade(Track::Etcd),
            Long("postgres-sql") => given.grade(Track::PostgresSql),
            Long("no-sandbox") => given.sandbox = false,
            Short('j') | Long("jobs") => given.jobs = Some(jobs(&lossy(&mut parser)?)?),
            Long("accept") => given.accept.push(accepted(&mut parser)?),
            Long("shard") => given.shard = Some(Shard::parse(&lossy(&mut parser)?)?),
            Long("merge") => {
                let values = parser.values().map_err(message)?;
                given
                    .merge
                    .get_or_insert_with(Vec::new)
                    .extend(values.map(PathBuf::from));
            }
            _ => return Err(message(arg.unexpected())),
        }
    }
    given.into_mode()
}

/// What the command line said, flag by flag, before it is checked as a
/// whole.
struct Given {
    submissions: Option<PathBuf>,
    out: Option<PathBuf>,
    expect: Option<PathBuf>,
    fill: Option<PathBuf>,
    test_limit: Duration,
    build_limit: Duration,
    solutions: bool,
    sandbox: bool,
    shard: Option<Shard>,
    watch: bool,
    merge: Option<Vec<PathBuf>>,
    hint: Option<String>,
    level: Option<usize>,
    /// The last track flag's track (SQLite without one): the track of
    /// `--hint` and `--explain`.
    track: Track,
    /// Every track flag's.
    tracks: Tracks,
    accept: Vec<String>,
    jobs: Option<usize>,
    explain: Option<String>,
    reset: Option<String>,
    yes: bool,
    /// `--lesson` or `--claim` (see `crate::engine::lesson_or_claim`).
    part: Option<Part>,
    /// `--gradescope` (see `crate::instructor::gradescope`).
    gradescope: Option<gradescope::Target>,
    /// `--classroom`, and whether `=lessons` (see `crate::instructor::classroom`).
    classroom: Option<bool>,
}

impl Default for Given {
    fn default() -> Given {
        Given {
            submissions: None,
            out: None,
            expect: None,
            fill: None,
            test_limit: Duration::from_secs(60),
            build_limit: Duration::from_secs(600),
            solutions: false,
            sandbox: true,
            shard: None,
            watch: false,
            merge: None,
            hint: None,
            level: None,
            track: Track::Sqlite,
            tracks: Tracks::default(),
            accept: Vec::new(),
            jobs: None,
            explain: None,
            reset: None,
            yes: false,
            part: None,
            gradescope: None,
            classroom: None,
        }
    }
}

impl Given {
    /// `--lesson` (`by_lesson`) or `--claim`, given `text`: one of them, once.
    fn select(&mut self, by_lesson: bool, text: &str) -> Result<(), String> {
        let selected = if by_lesson {
            Part::lesson(text)?
        } else {
            Part::claim(text)?
        };
        if self.part.is_some() {
            return Err("give one --lesson or --claim, not several".to_owned());
        }
        self.part = Some(selected);
        Ok(())
    }

    /// `--gradescope FILE`, once; the grading's time starts now.
    fn write_gradescope(&mut self, path: PathBuf) -> Result<(), String> {
        if self.gradescope.is_some() {
            return Err("give --gradescope once".to_owned());
        }
        self.gradescope = Some(gradescope::Target::new(path));
        Ok(())
    }

    /// A track flag: `track` is graded too, and is the one `--hint` and
    /// `--explain` take.
    fn grade(&mut self, track: Track) {
        self.tracks.add(track);
        self.track = track;
    }

    /// How this checkout is graded, as the flags say.
    fn checkout_options(&self) -> scorecard::Options {
        scorecard::Options {
            solutions: self.solutions,
            test_limit: self.test_limit,
            build_limit: self.build_limit,
            sandbox: self.sandbox,
            scope: Scope {
                tracks: self.tracks,
                part: self.part,
            },
        }
    }

    /// The mode the flags ask for, once they are checked together: the
    /// commands of their own first, then a class, shards or this checkout.
    fn into_mode(self) -> Result<Mode, String> {
        if let Some(by_lesson) = self.classroom {
            return Ok(Mode::Classroom {
                by_lesson,
                tracks: self.tracks,
            });
        }
        if (self.part.is_some() || self.gradescope.is_some())
            && (self.watch
                || self.hint.is_some()
                || self.submissions.is_some()
                || self.merge.is_some())
        {
            return Err(
                "--lesson, --claim and --gradescope are for this checkout's scorecard".to_owned(),
            );
        }
        if let Some(part) = self.part {
            part.check_on(self.tracks.list())?;
        }
        if let Some(what) = self.hint {
            let (level, track) = (self.level, self.track);
            return Ok(Mode::Hint { what, level, track });
        }
        if let Some(file) = self.reset {
            return Ok(Mode::Reset {
                file,
                yes: self.yes,
            });
        }
        if let Some(what) = &self.explain {
            if self.solutions {
                return Err(
                    "--explain compares your exercises with the reference, not with --solutions"
                        .to_owned(),
                );
            }
            return Ok(Mode::Explain {
                what: what.clone(),
                track: self.track,
                options: self.checkout_options(),
            });
        }
        self.grading_mode()
    }

    /// A class, its shards merged, or this checkout graded (once, or on
    /// every save).
    fn grading_mode(self) -> Result<Mode, String> {
        let class = self.submissions.is_some() || self.merge.is_some();
        if self.watch && (class || self.out.is_some()) {
            return Err("--watch is for this checkout's scorecard, not for a class".to_owned());
        }
        if !self.accept.is_empty() && self.submissions.is_none() {
            return Err("--accept is for a class graded with --submissions".to_owned());
        }
        if self.solutions && class {
            return Err("--solutions is for the scorecard, not for a class".to_owned());
        }
        if self.fill.is_some()
            && (self.submissions.is_none() || self.expect.is_some() || self.shard.is_some())
        {
            return Err(
                "--fill is for a whole class graded with --submissions, without --expect or --shard"
                    .to_owned(),
            );
        }
        if let Some(shards) = self.merge {
            return match (self.out, self.submissions, self.shard) {
                (Some(out), None, None) => Ok(Mode::Merge {
                    shards,
                    out,
                    expect: self.expect,
                    tracks: self.tracks,
                }),
                (None, _, _) => {
                    Err("--merge needs --out OUTDIR: where the merged class goes".to_owned())
                }
                _ => Err(
                    "--merge takes the shards' output folders, not --submissions or --shard"
                        .to_owned(),
                ),
            };
        }
        let options = self.checkout_options();
        match (self.submissions, self.out) {
            (Some(submissions), Some(out)) => Ok(Mode::Class(class::Options {
                submissions,
                out,
                test_limit: self.test_limit,
                build_limit: self.build_limit,
                expect: self.expect,
                sandbox: self.sandbox,
                shard: self.shard.unwrap_or(Shard::WHOLE),
                accept: self.accept,
                jobs: self.jobs,
                tracks: self.tracks,
                part: None,
                fill: self.fill,
            })),
            (Some(_), None) => {
                Err("--submissions needs --out OUTDIR: where to write the gradebook".to_owned())
            }
            (None, Some(_)) => Err("--out needs --submissions DIR: the class to grade".to_owned()),
            (None, None) if self.expect.is_some() || self.shard.is_some() => {
                Err("--expect and --shard need --submissions DIR and --out OUTDIR".to_owned())
            }
            (None, None) if self.watch => Ok(Mode::Watch(options)),
            (None, None) => Ok(Mode::Checkout {
                options,
                gradescope: self.gradescope,
            }),
        }
    }
}

/// An option's value, as text (anything not UTF-8 replaced).
fn lossy(parser: &mut lexopt::Parser) -> Result<String, String> {
    Ok(parser
        .value()
        .map_err(message)?
        .to_string_lossy()
        .into_owned())
}

/// An option's value, which must be UTF-8.
fn string(parser: &mut lexopt::Parser) -> Result<String, String> {
    use lexopt::ValueExt as _;
    parser.value().map_err(message)?.string().map_err(message)
}

/// An option's value, as a path.
fn path(parser: &mut lexopt::Parser) -> Result<PathBuf, String> {
    Ok(PathBuf::from(parser.value().map_err(message)?))
}

/// `--hint`'s level: 1, 2 or 3.
fn hint_level(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(number @ 1..=3) => Ok(number),
        _ => Err(format!("a hint's level is 1, 2 or 3, not {text:?}")),
    }
}

/// `--classroom`'s value: none (a step per claim), or `=lessons` (`true`).
fn classroom(value: Option<OsString>) -> Result<bool, String> {
    match value {
        None => Ok(false),
        Some(value) if value == "lessons" => Ok(true),
        Some(value) => Err(format!(
            "--classroom takes no value or =lessons, not {value:?}"
        )),
    }
}

/// `-j`'s value: a number of submissions from 1 to 64.
fn jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(count @ 1..=64) => Ok(count),
        _ => Err(format!(
            "-j takes a number of submissions from 1 to 64, not {text:?}"
        )),
    }
}

/// `--accept`'s value: a submission's name.
fn accepted(parser: &mut lexopt::Parser) -> Result<String, String> {
    parser
        .value()
        .map_err(message)?
        .into_string()
        .map_err(|name| format!("--accept takes a submission's name, not {name:?}"))
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
