//! Batch grading: every folder of a submissions directory, one after the
//! other, in one scratch copy of this repository.
//!
//! The scratch copy holds the lab's manifest, lock file, library, tests and
//! stubs, copied afresh for each submission; then only the exercise files
//! are overwritten with the submission's, so its edited tests or manifest
//! change nothing. All submissions share one target directory, so the
//! dependencies compile once per class (and once ever, as the work folder is
//! kept in the output folder between runs). A submission's files are read,
//! not executed, until its tests run, and those run in their own process
//! group under a wall-clock limit.
//!
//! Built with the feature `postgres`, the grader also grades the PostgreSQL
//! track: a submission's `exercises/postgres/apply.rs` and
//! `exercises/postgres/install_generation.rs` (or `postgres/…` beside the
//! files alone) replace the stubs of the scratch copy's `exercises/postgres/`,
//! which is restored with the rest of `exercises/` for every submission.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use fencing_lab::claims::{CLAIMS, Track};

use crate::flags;
use crate::report::{self, Graded};
use crate::score::{Score, TRACKS};
use crate::suite::{Built, Suite};

/// What the scratch copy takes from this repository; nothing else (not
/// `target/`, not `tests/class/`).
const REPOSITORY: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    ".cargo",
    "src",
    "tests/lab",
    "solutions",
    "exercises",
    // The workspace's other member: cargo loads every member's manifest, so
    // the copy needs it, though grading never builds it.
    "bench/Cargo.toml",
    "bench/src",
];

/// The grader's own source, which the scratch copy replaces with a stub.
const GRADER: &str = "src/bin/grade/main.rs";
const GRADER_STUB: &str =
    "//! Not built for grading: see src/bin/grade in the lab.\nfn main() {}\n";

/// The largest exercise file read; the reference is a few kilobytes.
const MAX_SOURCE: u64 = 256 * 1024;

/// How a class is graded.
#[derive(Debug, Clone)]
pub struct Options {
    /// One folder per submission.
    pub submissions: PathBuf,
    /// Where the gradebook, the results and the work folder go.
    pub out: PathBuf,
    /// The longest one test run may take.
    pub test_limit: Duration,
    /// The longest one build may take.
    pub build_limit: Duration,
    /// A gradebook the result must equal, byte for byte.
    pub expect: Option<PathBuf>,
}

/// Grades every submission, writes the outputs, and checks them.
pub fn grade(options: &Options) -> Result<ExitCode, String> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Cargo runs in the scratch copy: relative paths would point there.
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .map_err(|error| format!("cannot find {}: {error}", path.display()))
    };
    let options = &Options {
        submissions: absolute(&options.submissions)?,
        out: absolute(&options.out)?,
        ..options.clone()
    };
    let names = submissions(&options.submissions, &options.out)?;
    if names.is_empty() {
        return Err(format!(
            "no submissions in {}: each submission is a folder holding its exercise files",
            options.submissions.display()
        ));
    }

    // A gradebook to compare with must exist before a whole class is graded.
    if let Some(expected) = options.expect.as_ref().filter(|path| !path.is_file()) {
        return Err(format!(
            "cannot read the expected gradebook {}: no such file",
            expected.display()
        ));
    }

    let work = options.out.join(".work");
    let scratch = work.join("repository");
    let tmp = work.join("tmp");
    let suite = Suite {
        dir: scratch.clone(),
        target_dir: Some(work.join("target")),
        solutions: false,
        postgres: cfg!(feature = "postgres"),
        interactive: false,
        tmp_dir: Some(tmp.clone()),
        build_limit: options.build_limit,
        test_limit: options.test_limit,
    };
    // Links are followed within the class. A course author's own classes
    // (tests/class) also link into the lab's reference; a learner's must not.
    let mut allowed = vec![canonical(&options.submissions)?];
    let lab = canonical(repository)?;
    if allowed[0].starts_with(&lab) {
        allowed.push(lab);
    }

    let mut graded = Vec::new();
    let mut last_built: Option<Vec<Vec<u8>>> = None;
    for (index, name) in names.iter().enumerate() {
        let started = Instant::now();
        progress(format_args!("[{}/{}] {name}: ", index + 1, names.len()));
        let folder = options.submissions.join(name);
        // Afresh for each submission: one whose tests wrote into the scratch
        // copy must not change the next one's tests. Costs no extra build,
        // as the library and the suite are rebuilt for every submission.
        prepare_scratch(repository, &scratch)?;
        let context = Context {
            repository,
            scratch: &scratch,
            tmp: &tmp,
            suite: &suite,
            allowed: &allowed,
            first: index == 0,
        };
        let mut submission =
            grade_one(name, &folder, &context, &mut last_built).inspect_err(|_| {
                progress(format_args!("stopped\n"));
            })?;
        submission.elapsed = started.elapsed();
        let points: Vec<String> = submission
            .score
            .tracks
            .iter()
            .map(|track| match track.track {
                Track::Sqlite => format!("{}/{}", track.earned(), track.total()),
                _ => format!(
                    "{} {}/{}",
                    track.track.name(),
                    track.earned(),
                    track.total()
                ),
            })
            .collect();
        progress(format_args!("done {}\n", points.join(", ")));
        write_results(&options.out, &submission)?;
        graded.push(submission);
    }

    let gradebook = report::gradebook(&graded)?;
    let gradebook_path = options.out.join("gradebook.csv");
    fs::write(&gradebook_path, &gradebook)
        .map_err(|error| format!("cannot write {}: {error}", gradebook_path.display()))?;

    print!("{}", report::summary_table(&graded));
    let flags = report::flags_listing(&graded);
    if !flags.is_empty() {
        print!("\n{flags}");
    }
    println!();
    println!(
        "wrote {} and {} results.json files under {}",
        gradebook_path.display(),
        graded.len(),
        options.out.display()
    );

    let mut failed = false;
    // A mutant is a known mistake; one that loses nothing is a suite defect.
    // Only the tracks it handed files in for count: a SQLite mutant loses
    // the PostgreSQL track to its stubs, which says nothing of the suite.
    let perfect_mutants: Vec<&str> = graded
        .iter()
        .filter(|submission| {
            submission.name.starts_with("mutant-")
                && !submission.submitted.is_empty()
                && submission
                    .score
                    .tracks
                    .iter()
                    .filter(|track| submission.submitted.contains(&track.track))
                    .all(|track| track.full_marks())
        })
        .map(|submission| submission.name.as_str())
        .collect();
    if !perfect_mutants.is_empty() {
        eprintln!(
            "grade: these mutants scored full marks, so the suite misses their mistake: {}",
            perfect_mutants.join(", ")
        );
        failed = true;
    }
    if let Some(expected) = &options.expect {
        match report::compare_with_expected(&gradebook, expected) {
            Ok(()) => println!("the gradebook matches {}", expected.display()),
            Err(difference) => {
                eprintln!("grade: {difference}");
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What every submission is graded with.
struct Context<'a> {
    repository: &'a Path,
    scratch: &'a Path,
    tmp: &'a Path,
    suite: &'a Suite,
    allowed: &'a [PathBuf],
    first: bool,
}

/// One submission, from its files to its score. What goes wrong with the
/// submission is its result; an error is the grader's own trouble (cargo
/// cannot run, the scratch copy cannot be written), which would hit every
/// submission alike and stops the class.
fn grade_one(
    name: &str,
    folder: &Path,
    context: &Context<'_>,
    last_built: &mut Option<Vec<Vec<u8>>>,
) -> Result<Graded, String> {
    let mut graded = Graded {
        name: name.to_owned(),
        score: Score::nothing(),
        error: None,
        short: String::new(),
        notes: Vec::new(),
        flags: Vec::new(),
        submitted: Vec::new(),
        elapsed: Duration::ZERO,
    };
    let ignored = ignored_entries(folder);
    if !ignored.is_empty() {
        graded.notes.push(format!(
            "ignored (only the exercise files are graded): {}",
            ignored.join(", ")
        ));
    }

    // The submission's files, or the untouched stub where one is missing.
    let files = exercise_files();
    let mut sources = Vec::new();
    let mut missing = Vec::new();
    for (track, file) in &files {
        let file = file.as_str();
        match read_submitted(folder, file, context.allowed, &mut graded.notes) {
            Ok(Some(source)) => {
                let text = String::from_utf8_lossy(&source);
                graded.flags.extend(flags::scan(file, &text));
                sources.push(source);
                if !graded.submitted.contains(track) {
                    graded.submitted.push(*track);
                }
            }
            Ok(None) => {
                missing.push(file);
                let stub = fs::read(context.repository.join(file))
                    .map_err(|error| format!("cannot read the stub {file}: {error}"))?;
                sources.push(stub);
            }
            Err(reason) => {
                graded.short = "not graded".to_owned();
                graded.error = Some(reason);
                return Ok(graded);
            }
        }
    }
    if !missing.is_empty() {
        graded.notes.push(format!(
            "not in the submission, graded as the untouched stub: {}",
            missing.join(", ")
        ));
    }
    for ((_, file), source) in files.iter().zip(&sources) {
        write_source(&context.scratch.join(file), source)
            .map_err(|error| format!("cannot write {file} into the scratch copy: {error}"))?;
    }

    progress(format_args!(
        "{}",
        if context.first {
            "building (the first build may compile the dependencies too)… "
        } else {
            "building… "
        }
    ));
    let built = context.suite.build()?;
    let executable = match built {
        Built::Executable {
            path,
            library_fresh,
        } => {
            // Same files as last time, or cargo saw the change: either way
            // the binary is this submission's.
            if library_fresh && last_built.as_ref() != Some(&sources) {
                return Err(format!(
                    "cargo reused the previous build for {name}, whose files differ; \
                     is the clock of {} behind?",
                    context.scratch.display()
                ));
            }
            *last_built = Some(sources);
            path
        }
        Built::CompileError(first_error) => {
            *last_built = None;
            graded.short = "does not compile".to_owned();
            graded.error = Some(format!(
                "the exercises do not compile; the first error:\n{first_error}"
            ));
            return Ok(graded);
        }
        Built::TimedOut(limit) => {
            *last_built = None;
            graded.short = "build timed out".to_owned();
            graded.error = Some(format!(
                "the build took longer than {} s and was stopped",
                limit.as_secs()
            ));
            return Ok(graded);
        }
        // Cargo itself failed (a broken manifest, no network for the
        // dependencies): every submission would fail the same way.
        Built::Failed(reason) => return Err(format!("cannot build the lab's suite: {reason}")),
    };

    progress(format_args!("testing… "));
    // Lab files a killed run left behind go with it, before the next run.
    let _ = fs::remove_dir_all(context.tmp);
    fs::create_dir_all(context.tmp)
        .map_err(|error| format!("cannot create {}: {error}", context.tmp.display()))?;
    let ran = context.suite.run(&executable)?;
    let _ = fs::remove_dir_all(context.tmp);

    graded.score = ran.score;
    if ran.stdout_bytes > 1 << 20 {
        graded.notes.push(format!(
            "the test run printed {:.1} MB; only its verdict lines were read",
            ran.stdout_bytes as f64 / 1e6
        ));
    }
    graded.short = match &ran.problem {
        Some((trouble, _)) => trouble.short().to_owned(),
        None if graded.score.full_marks() => "pass".to_owned(),
        None => {
            // "fail: L2.2 L2.6; postgres L3.2": per track short of full marks.
            let parts: Vec<String> = graded
                .score
                .tracks
                .iter()
                .filter(|track| !track.full_marks())
                .map(|track| {
                    let failing = track.not_passing();
                    let shown: Vec<&str> = failing.iter().copied().take(6).collect();
                    let more = if failing.len() > shown.len() {
                        " …"
                    } else {
                        ""
                    };
                    let key = match track.track {
                        Track::Sqlite => String::new(),
                        _ => format!("{} ", track.track.key()),
                    };
                    format!("{key}{}{more}", shown.join(" "))
                })
                .collect();
            format!("fail: {}", parts.join("; "))
        }
    };
    if let Some((_, problem)) = ran.problem {
        graded.error = Some(format!("{problem}. Only the claims seen to pass count."));
    }
    Ok(graded)
}

/// The exercise files of the graded tracks, from the claim catalogue, each
/// once, track by track: `exercises/apply.rs`, …, then
/// `exercises/postgres/apply.rs`, … when PostgreSQL is graded.
fn exercise_files() -> Vec<(Track, String)> {
    TRACKS
        .iter()
        .flat_map(|&track| {
            let files: BTreeSet<String> = CLAIMS
                .iter()
                .filter(|claim| claim.on(track))
                .flat_map(|claim| claim.files.iter().map(|file| track.exercise_file(file)))
                .collect();
            files.into_iter().map(move |file| (track, file))
        })
        .collect()
}

/// Where a submission holding the files alone keeps an exercise file: its
/// path without `exercises/` (`apply.rs`, `postgres/apply.rs`).
fn alone(file: &str) -> &str {
    file.strip_prefix("exercises/").unwrap_or(file)
}

/// The submissions: the folders of `dir`, by name, without hidden ones and
/// without the output folder if it sits inside.
fn submissions(dir: &Path, out: &Path) -> Result<Vec<String>, String> {
    let entries =
        fs::read_dir(dir).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    let out = fs::canonicalize(out).ok();
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        if out.is_some() && fs::canonicalize(&path).ok() == out {
            continue;
        }
        if entry.file_name().to_str().is_none() {
            return Err(format!(
                "the submission folder {name:?} has a name that is not UTF-8; rename it"
            ));
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// An exercise file of the submission: `exercises/apply.rs`, else
/// `apply.rs` (`exercises/postgres/apply.rs`, else `postgres/apply.rs`);
/// `None` when it has neither. A symbolic link is followed only
/// within `allowed`, so a submission cannot make the grader read, and quote
/// in a compiler error, any other file; a link out of the submission's own
/// folder is worth a note.
fn read_submitted(
    folder: &Path,
    file: &str,
    allowed: &[PathBuf],
    notes: &mut Vec<String>,
) -> Result<Option<Vec<u8>>, String> {
    let Some(path) = [folder.join(file), folder.join(alone(file))]
        .into_iter()
        .find(|path| fs::symlink_metadata(path).is_ok())
    else {
        return Ok(None);
    };
    let shown = path
        .strip_prefix(folder)
        .unwrap_or(&path)
        .display()
        .to_string();
    let real = fs::canonicalize(&path).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !allowed.iter().any(|root| real.starts_with(root)) {
        return Err(format!(
            "{shown} is a link out of the submissions folder ({}); not read",
            real.display()
        ));
    }
    if fs::canonicalize(folder).is_ok_and(|own| !real.starts_with(own)) {
        notes.push(format!(
            "{shown} is a link out of this submission, to {}",
            real.display()
        ));
    }
    let metadata = fs::metadata(&real).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if metadata.len() > MAX_SOURCE {
        return Err(format!(
            "{shown} is {} bytes; an exercise file is a few kilobytes (at most {MAX_SOURCE})",
            metadata.len()
        ));
    }
    fs::read(&real)
        .map(Some)
        .map_err(|error| format!("cannot read {shown}: {error}"))
}

/// Writes an exercise file into the scratch copy, dated a second ahead.
/// Cargo rebuilds a file newer than its last build; on a file system that
/// keeps whole seconds, a file written in the second of the previous build
/// would look old, and the previous submission's binary would be tested.
fn write_source(path: &Path, source: &[u8]) -> io::Result<()> {
    fs::write(path, source)?;
    let file = fs::File::options().write(true).open(path)?;
    file.set_modified(SystemTime::now() + Duration::from_secs(1))
}

/// The submission's entries that are not exercise files, for the report.
/// The folders that may hold exercise files (`exercises/`, and with the
/// PostgreSQL track `postgres/` and `exercises/postgres/`) are looked into.
fn ignored_entries(folder: &Path) -> Vec<String> {
    let files = exercise_files();
    let graded_names: BTreeSet<&str> = files
        .iter()
        .flat_map(|(_, file)| [file.as_str(), alone(file)])
        .collect();
    // "", "exercises/", "postgres/", "exercises/postgres/".
    let folders: BTreeSet<&str> = graded_names
        .iter()
        .map(|name| name.rfind('/').map_or("", |slash| &name[..=slash]))
        .collect();
    let mut ignored = Vec::new();
    let mut look = |dir: &Path, prefix: &str| {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            if name.starts_with('.') || graded_names.contains(relative.as_str()) {
                continue;
            }
            let is_dir = entry.path().is_dir();
            if is_dir && folders.contains(format!("{relative}/").as_str()) {
                continue;
            }
            let slash = if is_dir { "/" } else { "" };
            ignored.push(format!("{relative}{slash}"));
        }
    };
    for prefix in &folders {
        look(&folder.join(prefix), prefix);
    }
    ignored.sort();
    if ignored.len() > 10 {
        let more = ignored.len() - 8;
        ignored.truncate(8);
        ignored.push(format!("and {more} more"));
    }
    ignored
}

/// Makes the scratch copy: this repository's build inputs, replaced whole,
/// next to the target directory that is kept.
fn prepare_scratch(repository: &Path, scratch: &Path) -> Result<(), String> {
    let failed =
        |what: &Path, error: io::Error| format!("cannot prepare {}: {error}", what.display());
    fs::create_dir_all(scratch).map_err(|error| failed(scratch, error))?;
    for part in REPOSITORY {
        let (from, to) = (repository.join(part), scratch.join(part));
        if to.exists() {
            let removed = if to.is_dir() {
                fs::remove_dir_all(&to)
            } else {
                fs::remove_file(&to)
            };
            removed.map_err(|error| failed(&to, error))?;
        }
        if from.exists() {
            copy(&from, &to).map_err(|error| failed(&to, error))?;
        }
    }
    // Cargo builds every binary of the package for an integration test, so
    // each submission would recompile this grader too (about a second) for
    // nothing: the scratch copy gets a grader that does nothing.
    let grader = scratch.join(GRADER);
    if let Some(dir) = grader.parent() {
        fs::remove_dir_all(dir)
            .and_then(|()| fs::create_dir_all(dir))
            .and_then(|()| fs::write(&grader, GRADER_STUB))
            .map_err(|error| failed(&grader, error))?;
    }
    Ok(())
}

/// Copies a file or a folder, following symbolic links.
fn copy(from: &Path, to: &Path) -> io::Result<()> {
    if from.is_dir() {
        fs::create_dir_all(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(from, to).map(|_| ())
    }
}

fn canonical(path: &Path) -> Result<PathBuf, String> {
    fs::canonicalize(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}

fn write_results(out: &Path, graded: &Graded) -> Result<(), String> {
    let folder = out.join(&graded.name);
    let path = folder.join("results.json");
    let text = serde_json::to_string_pretty(&report::results_json(graded))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    fs::create_dir_all(&folder)
        .and_then(|()| fs::write(&path, text + "\n"))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// Progress on stderr, shown at once.
fn progress(text: std::fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_fmt(text);
    let _ = stderr.flush();
}
