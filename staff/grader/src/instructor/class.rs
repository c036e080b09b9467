//! Batch grading: every folder of a submissions directory (or one shard of
//! them), by `-j N` workers at once (see [`default_jobs`]), each with its
//! own scratch copy of the lab and target directory, each build and test
//! run in the sandbox. The outputs are the same whatever the number of
//! workers: they are written from the rows sorted by name.
//!
//! The dependencies compile once per machine, into the dependency cache
//! (`cache`), which each worker's target directory starts as a copy of; a
//! worker's submissions then share its target directory, kept in the output
//! folder's `.work/` between runs. A submission's files are read, not executed, until
//! its tests run (`submission`); the scratch copy is made afresh for each
//! (`scratch`); the outputs are written by `output`.
//!
//! Given `--postgres`, the grader also grades the PostgreSQL track: a
//! submission's `exercises/postgres/apply.rs` and
//! `exercises/postgres/install_generation.rs` (or `postgres/…` beside the
//! files alone) replace the stubs of the scratch copy's `exercises/postgres/`,
//! which is restored with the rest of `exercises/` for every submission.
//! Given `--etcd`, the etcd track likewise: a submission's
//! `exercises/etcd/worker.rs` (or `etcd/worker.rs`) replaces the stub of
//! `exercises/etcd/`; its worker calls the submission's SQLite exercises.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::engine::accounts;
use crate::engine::cache;
use crate::engine::lesson_or_claim::Part;
use crate::engine::review;
use crate::engine::sandbox::{self, Sandbox};
use crate::engine::score::{NeverRan, Scope, Score, Tracks};
use crate::engine::scratch;
use crate::engine::submission;
use crate::engine::suite::{Built, Suite};
use crate::instructor::fill::Filling;
use crate::instructor::output::{self, Shard};
use crate::instructor::report::{self, Graded, Row};
use lab_claims::Track;

/// Said in every report of a class graded with `--no-sandbox`.
pub const NO_SANDBOX: &str = "graded WITHOUT the sandbox (--no-sandbox): the code under test \
     could read the reference and other submissions, write outside its copy, use the network, \
     and leave processes behind";

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
    /// Grade in the sandbox (the default), or not (`--no-sandbox`).
    pub sandbox: bool,
    /// Only this slice of the class (`--shard K/N`).
    pub shard: Shard,
    /// Submissions an instructor accepted despite what the review held
    /// (`--accept NAME`): their points count.
    pub accept: Vec<String>,
    /// How many submissions are graded at once (`-j N`); `None` for
    /// [`default_jobs`].
    pub jobs: Option<usize>,
    /// The tracks graded.
    pub tracks: Tracks,
    /// Only this part's claims are graded (`--fill` grades one claim at a
    /// time); `None` for every claim.
    pub part: Option<Part>,
    /// A gradebook whose missing claim columns are graded and added
    /// (`--fill FILE`), instead of grading every claim.
    pub fill: Option<PathBuf>,
}

/// Grades every submission (of the shard), writes the outputs, and checks
/// them.
pub fn grade(options: &Options) -> Result<ExitCode, String> {
    let repository = crate::engine::checkout::repository();
    let (options, found) = &checked(options)?;
    let class = &found.names;
    let _lock = output::lock(&options.out)?;
    // From here on the output folder is named by its real path: bwrap
    // mounts what a path leads to, and a link on the way would otherwise
    // name a folder the sandbox does not show.
    let options = &Options {
        out: canonical(&options.out)?,
        ..options.clone()
    };
    if options.sandbox {
        sandbox::check()?;
    }
    if let Some(gradebook) = &options.fill {
        return fill(options, &repository, class, gradebook);
    }
    let names = options.shard.slice(class);
    let graded = grade_names(options, &repository, class, &names)?;

    let rows: Vec<Row> = graded.iter().map(Row::of).collect();
    let written = output::write_class(
        &options.out,
        class,
        options.shard,
        options.sandbox,
        options.tracks,
        &rows,
    )?;
    say_summary(options, &graded, names.len(), class.len(), &written);
    for (name, why) in &found.refused {
        println!("not graded: the folder {name}: {why}");
    }
    Ok(report::exit_status(
        &rows,
        &written.gradebook_bytes,
        options.expect.as_deref(),
    ))
}

/// `--fill`: grades each claim `gradebook` lacks a column of, alone over
/// the whole class, and writes `gradebook` with their columns to the
/// output folder (see [`crate::instructor::fill`]).
fn fill(
    options: &Options,
    repository: &Path,
    class: &[String],
    gradebook: &Path,
) -> Result<ExitCode, String> {
    let mut filling = Filling::read(gradebook, options.tracks, class)?;
    let missing = filling.missing();
    for &id in &missing {
        println!("grading {id}, which {} lacks", gradebook.display());
        // Only the tracks the claim is on: a SQLite claim builds no server.
        let mut tracks = Tracks::default();
        for &track in options.tracks.list() {
            if lab_claims::claim(id).is_some_and(|claim| claim.on(track)) {
                tracks.add(track);
            }
        }
        let alone = Options {
            part: Some(Part::Claim(id)),
            tracks,
            ..options.clone()
        };
        let graded = grade_names(&alone, repository, class, class)?;
        filling.add(&graded.iter().map(Row::of).collect::<Vec<_>>());
    }
    let out = options.out.join("gradebook.csv");
    fs::create_dir_all(&options.out)
        .map_err(|error| format!("cannot create {}: {error}", options.out.display()))?;
    fs::write(&out, filling.write()?)
        .map_err(|error| format!("cannot write {}: {error}", out.display()))?;
    match missing.as_slice() {
        [] => println!("{} lacks no claim's column", gradebook.display()),
        ids => println!("graded {} alone", ids.join(", ")),
    }
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Grades the submissions `names` of `class` (each a folder of
/// `options.submissions`), as many at once as `-j` or the machine allows.
pub fn grade_names(
    options: &Options,
    repository: &Path,
    class: &[String],
    names: &[String],
) -> Result<Vec<Graded>, String> {
    let (jobs, chosen) = jobs(options, names.len())?;
    let (workers, mut suites) = workers(options, repository, jobs)?;
    dependencies(options, repository, &workers, &mut suites)?;
    progress(format_args!(
        "grading {} submissions, {jobs} at once{chosen}\n",
        names.len()
    ));
    // Links are followed within the class. A course author's own classes
    // (staff/class) also link into the lab's reference; a learner's must not.
    let mut allowed = vec![canonical(&options.submissions)?];
    let lab = canonical(repository)?;
    if allowed[0].starts_with(&lab) {
        allowed.push(lab.clone());
    }
    let contexts: Vec<Context> = workers
        .iter()
        .zip(&suites)
        .map(|(worker, suite)| Context {
            repository,
            worker,
            suite,
            allowed: &allowed,
            lab: &lab,
            class,
            streaming: jobs == 1,
        })
        .collect();
    grade_all(options, &contexts, names)
}

/// The options with absolute paths (cargo runs in the scratch copy, where
/// relative paths would point), and the class they name, checked before
/// anything is graded: submissions there are, none holding the output
/// folder, every `--accept` one of them, and the `--expect` file there.
/// The folders refused are said at once.
fn checked(options: &Options) -> Result<(Options, submission::Found), String> {
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .map_err(|error| format!("cannot find {}: {error}", path.display()))
    };
    let options = Options {
        submissions: absolute(&options.submissions)?,
        out: absolute(&options.out)?,
        ..options.clone()
    };
    let found = submission::list(&options.submissions, &options.out)?;
    for (name, why) in &found.refused {
        eprintln!("grade: not graded: the folder {name}: {why}");
    }
    let class = &found.names;
    if class.is_empty() {
        return Err(format!(
            "no submissions in {}: each submission is a folder holding its exercise files",
            options.submissions.display()
        ));
    }
    output::refuse_inside_submission(&options.submissions, class, &options.out)?;
    if let Some(unknown) = options.accept.iter().find(|name| !class.contains(name)) {
        return Err(format!(
            "--accept {unknown}: the class has no submission of that name"
        ));
    }
    // A gradebook to compare with must exist before a whole class is graded.
    if let Some(expected) = options.expect.as_ref().filter(|path| !path.is_file()) {
        return Err(format!(
            "cannot read the expected gradebook {}: no such file",
            expected.display()
        ));
    }
    Ok((options, found))
}

/// How many of `count` submissions are graded at once, and how that was
/// chosen, as the progress line says it. With the sandbox started by root,
/// each worker's account is claimed now, for the whole run: an explicit
/// `-j` beyond the accounts that exist is refused, and while another
/// grading holds some, this one grades with the free ones (waiting for a
/// first one when none is free).
fn jobs(options: &Options, count: usize) -> Result<(usize, String), String> {
    let (default, why) = default_jobs(options.tracks);
    let mut jobs = options.jobs.unwrap_or(default).clamp(1, count.max(1));
    let mut held = None;
    if options.sandbox && accounts::is_root() {
        let existing = accounts::existing();
        if jobs > existing {
            let name = accounts::next_name(existing);
            return Err(format!(
                "grading {jobs} submissions at once as root needs an account per worker, and \
                 there is no {name}: create it with `useradd --system --no-create-home --shell \
                 /usr/sbin/nologin {name}`, or give a smaller -j"
            ));
        }
        let claimed = accounts::claim(jobs)?;
        if claimed < jobs {
            held = Some(format!(
                " (of {jobs}: the other sandbox accounts are held by another grading on this \
                 machine)"
            ));
            jobs = claimed;
        }
    }
    let chosen = if let Some(held) = held {
        held
    } else if options.jobs.is_some() {
        " (-j)".to_owned()
    } else if jobs < default {
        " (one per submission)".to_owned()
    } else {
        format!(" (the default: {why}; -j to choose)")
    };
    Ok((jobs, chosen))
}

/// A folder per worker (its scratch copy, its test runs' /tmp and its
/// target directory, a copy of the dependency cache) and its suite; the
/// first scratch copy made, and the dependencies fetched.
fn workers(
    options: &Options,
    repository: &Path,
    jobs: usize,
) -> Result<(Vec<Worker>, Vec<Suite>), String> {
    let work = options.out.join(".work");
    // The single work folder of an older grader: its build is not ours.
    for old in ["repository", "target", "tmp"] {
        let _ = fs::remove_dir_all(work.join(old));
    }
    let workers: Vec<Worker> = (1..=jobs)
        .map(|number| Worker::new(&work, number))
        .collect();
    let suites: Vec<Suite> = workers
        .iter()
        .map(|worker| class_suite(options, repository, worker))
        .collect::<Result<_, _>>()?;
    scratch::prepare(repository, &workers[0].scratch)?;
    suites[0].fetch()?;
    if options.sandbox {
        sandbox::share_sources()?;
    }
    Ok((workers, suites))
}

/// The keys of the caches a new one for `options`' tracks may start from:
/// the same lab with some of those tracks left out, the most tracks first
/// (SQLite is in every one).
fn bases(options: &Options, repository: &Path) -> Result<Vec<String>, String> {
    let tracks = options.tracks.list();
    let mut subsets: Vec<Vec<Track>> = (0..1usize << tracks.len())
        .map(|mask| {
            (0..tracks.len())
                .filter(|bit| mask & (1 << bit) != 0)
                .map(|bit| tracks[bit])
                .collect::<Vec<Track>>()
        })
        .filter(|subset| subset.len() < tracks.len() && subset.first() == Some(&Track::Sqlite))
        .collect();
    subsets.sort_by_key(|subset| std::cmp::Reverse(subset.len()));
    subsets
        .iter()
        .map(|subset| cache::key(repository, &format!("{subset:?}")))
        .collect()
}

/// The dependency cache, built once per lock file and toolchain, copied to
/// each worker's target directory; and with the PostgreSQL server graded,
/// each worker's template cluster.
fn dependencies(
    options: &Options,
    repository: &Path,
    workers: &[Worker],
    suites: &mut [Suite],
) -> Result<(), String> {
    let features = format!("{:?}", options.tracks.list());
    let key = cache::key(repository, &features)?;
    let cache_started = Instant::now();
    let mut bases = Vec::new();
    if !cache::root(repository).join(&key).exists() {
        progress(format_args!(
            "building the dependency cache from the untouched lab (once per lock file and \
             toolchain)… "
        ));
        bases = self::bases(options, repository)?;
    }
    let cache_dir = cache::ensure(repository, &suites[0], &key, &features, &bases)?;
    if cache_started.elapsed() > Duration::from_secs(1) {
        progress(format_args!(
            "built in {:.0} s\n",
            cache_started.elapsed().as_secs_f64()
        ));
    }
    let copy_started = Instant::now();
    let mut seeded = 0;
    for worker in workers {
        if cache::seed(&cache_dir, &key, &worker.target)? {
            seeded += 1;
        }
        if options.sandbox {
            sandbox::hand_over(worker.number, &[&worker.target])?;
        }
    }
    if uses_postgres(options.tracks) {
        pg_templates(workers, suites)?;
    }
    if seeded > 0 {
        progress(format_args!(
            "dependencies: {} copied from {} in {:.1} s\n",
            if seeded == 1 {
                "one work folder".to_owned()
            } else {
                format!("{seeded} work folders")
            },
            cache_dir.display(),
            copy_started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// The PostgreSQL track: a fresh cluster per worker, made once, that each
/// test run copies instead of running initdb (half a second each).
fn pg_templates(workers: &[Worker], suites: &mut [Suite]) -> Result<(), String> {
    for (worker, suite) in workers.iter().zip(suites) {
        let Some(sandbox) = &suite.sandbox else { break };
        let dir = &worker.pg_template;
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir)
            .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
        sandbox::hand_over(worker.number, &[dir])?;
        suite.pg_template = crate::engine::suite::make_pg_template(sandbox, dir)?;
    }
    Ok(())
}

/// Grades `names`, a worker per context, each taking the next submission
/// when done with one; the first error stops them all. The results come
/// back in the order of `names`.
fn grade_all(
    options: &Options,
    contexts: &[Context<'_>],
    names: &[String],
) -> Result<Vec<Graded>, String> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Option<Graded>>> = Mutex::new(names.iter().map(|_| None).collect());
    let trouble: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for context in contexts {
            let (next, stop, done, trouble) = (&next, &stop, &done, &trouble);
            scope.spawn(move || {
                let mut last_built: Option<Vec<Vec<u8>>> = None;
                while !stop.load(Ordering::SeqCst) {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(name) = names.get(index) else { break };
                    let graded =
                        grade_at(options, context, index, names.len(), name, &mut last_built);
                    match graded {
                        Ok(graded) => {
                            if let Ok(mut done) = done.lock() {
                                done[index] = Some(graded);
                            }
                        }
                        Err(error) => {
                            stop.store(true, Ordering::SeqCst);
                            if let Ok(mut trouble) = trouble.lock() {
                                trouble.get_or_insert(error);
                            }
                        }
                    }
                }
            });
        }
    });
    if let Some(error) = trouble.into_inner().ok().flatten() {
        return Err(error);
    }
    done.into_inner()
        .map_err(|_| "a grading worker panicked".to_owned())?
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| "a submission was left ungraded".to_owned())
}

/// Whether a graded track runs on the PostgreSQL server.
fn uses_postgres(tracks: Tracks) -> bool {
    tracks.has(Track::Postgres) || tracks.has(Track::PostgresSql)
}

/// How many submissions a class grades at once unless told (`-j`): one per
/// core, at most [`MAX_DEFAULT_JOBS`], no more than the memory available
/// allows at [`MEMORY_PER_JOB`] each, and, started by root, no more than
/// there are accounts for the workers (`accounts`). With the PostgreSQL or the
/// etcd track graded, one: their claims time servers of their own (a lease
/// that runs out, a leader killed), which two runs at once on a small
/// machine would crowd.
/// Returns the number and why, as the progress line says it.
pub fn default_jobs(tracks: Tracks) -> (usize, String) {
    if tracks.list().len() > 1 {
        return (
            1,
            "a server track is graded, and its claims time servers of their own, which \
             two runs at once would crowd"
                .to_owned(),
        );
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let by_memory = available_memory().map(|bytes| (bytes / MEMORY_PER_JOB) as usize);
    let most = cores.min(by_memory.unwrap_or(1)).clamp(1, MAX_DEFAULT_JOBS);
    let jobs = accounts::existing().clamp(1, most);
    (jobs, jobs_reason(jobs, most, cores, by_memory))
}

/// Why [`default_jobs`] chose `jobs` of `most` (what the cores, the memory
/// and the cap allow): the first limit it met.
fn jobs_reason(jobs: usize, most: usize, cores: usize, by_memory: Option<usize>) -> String {
    if jobs < most {
        let next = accounts::next_name(jobs);
        return format!(
            "started by root, each submission graded at once needs a sandbox account of its \
             own, and there {} for {jobs} (`useradd --system --no-create-home --shell \
             /usr/sbin/nologin {next}` adds one)",
            if jobs == 1 { "is one" } else { "are accounts" },
        );
    }
    match by_memory {
        None => "free memory unknown (no /proc/meminfo), so one".to_owned(),
        Some(fit) if fit.max(1) == jobs && jobs < cores.min(MAX_DEFAULT_JOBS) => format!(
            "free memory allows {jobs} at {} GiB each",
            MEMORY_PER_JOB >> 30
        ),
        _ if jobs < cores => format!("at most {MAX_DEFAULT_JOBS} by default"),
        _ => format!(
            "one per core, {cores} core{}",
            if cores == 1 { "" } else { "s" }
        ),
    }
}

/// The most submissions graded at once by default.
const MAX_DEFAULT_JOBS: usize = 4;

/// What one submission graded at a time may need: its build (rustc and the
/// linker, a few hundred MB) and its test run, with room to spare.
const MEMORY_PER_JOB: u64 = 2 << 30;

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_memory() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One of the class's workers: its folders under `.work/NUMBER/`.
struct Worker {
    number: usize,
    scratch: PathBuf,
    tmp: PathBuf,
    target: PathBuf,
    /// Where the PostgreSQL track's template cluster is made.
    pg_template: PathBuf,
}

impl Worker {
    fn new(work: &Path, number: usize) -> Worker {
        let dir = work.join(number.to_string());
        Worker {
            number,
            scratch: dir.join("repository"),
            tmp: dir.join("tmp"),
            target: dir.join("target"),
            pg_template: dir.join("pg-template"),
        }
    }
}

/// How a worker's submissions are built and run: in its scratch copy, with
/// its target directory, in a sandbox that hides the lab, the class and the
/// output folder (unless `--no-sandbox`).
fn class_suite(options: &Options, repository: &Path, worker: &Worker) -> Result<Suite, String> {
    fs::create_dir_all(&worker.scratch)
        .map_err(|error| format!("cannot create {}: {error}", worker.scratch.display()))?;
    let sandbox = if options.sandbox {
        Some(Sandbox {
            hidden: vec![
                sandbox::real(repository)?,
                sandbox::real(&options.submissions)?,
                sandbox::real(&options.out)?,
            ],
            // Read-only: a test run writes only into its private /tmp,
            // whose size is bounded, never into the scratch copy.
            readable: vec![sandbox::real(&worker.scratch)?],
            writable: Vec::new(),
            worker: worker.number,
        })
    } else {
        None
    };
    Ok(Suite {
        dir: worker.scratch.clone(),
        target_dir: worker.target.clone(),
        solutions: false,
        scope: Scope {
            tracks: options.tracks,
            part: options.part,
        },
        interactive: false,
        tmp_dir: Some(worker.tmp.clone()),
        pg_template: None,
        sandbox,
        build_limit: options.build_limit,
        test_limit: options.test_limit,
    })
}

/// The `index`-th submission of `count`, graded by the worker of `context`,
/// its `results.json` written.
fn grade_at(
    options: &Options,
    context: &Context<'_>,
    index: usize,
    count: usize,
    name: &str,
    last_built: &mut Option<Vec<Vec<u8>>>,
) -> Result<Graded, String> {
    let started = Instant::now();
    let scratch_dir = &context.worker.scratch;
    if context.streaming {
        progress(format_args!("[{}/{count}] {name}: ", index + 1));
    }
    let folder = options.submissions.join(name);
    // Afresh for each submission: one whose tests wrote into the scratch
    // copy must not change the next one's tests. Costs no extra build,
    // as the library and the suite are rebuilt for every submission.
    scratch::prepare(context.repository, scratch_dir)?;
    let accepted = options.accept.iter().any(|accepted| accepted == name);
    let mut submission =
        grade_one(name, &folder, accepted, context, last_built).inspect_err(|_| {
            if context.streaming {
                progress(format_args!("stopped\n"));
            }
        })?;
    submission.elapsed = started.elapsed();
    if submission.held() {
        submission.score.withhold_output();
        if submission.short == DOES_NOT_COMPILE {
            // Until an instructor has read what the review held, the
            // compiler does not quote what that code made it read.
            submission.error = Some(
                "the exercises do not compile; the compiler's messages are not quoted while \
                 the submission is on hold for review (accepted, its report quotes them)"
                    .to_owned(),
            );
        }
        submission.short = format!("on hold; {}", submission.short);
    }
    let tracks = context.suite.scope.tracks;
    let behind = submission::classmates_behind(&options.submissions, name, context.class, tracks);
    if !behind.is_empty() {
        // Where an instructor looks: full marks for a classmate's files.
        let whose: Vec<String> = behind.iter().map(|other| format!("{other}'s")).collect();
        submission.short = format!("{}{}{}", submission.short, report::LINKED, whose.join(", "));
    }
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
    if context.streaming {
        progress(format_args!("done {}\n", points.join(", ")));
    } else {
        progress(format_args!(
            "[{}/{count}] {name}: done {} ({:.1} s)\n",
            index + 1,
            points.join(", "),
            submission.elapsed.as_secs_f64()
        ));
    }
    // Whatever the build or the run left in the scratch copy goes now,
    // not when the next submission starts.
    fs::remove_dir_all(scratch_dir)
        .map_err(|error| format!("cannot remove {}: {error}", scratch_dir.display()))?;
    output::write_results(
        &options.out,
        &submission.name,
        &report::results_json(&submission),
    )?;
    Ok(submission)
}

/// The summary on stdout: the table, the submissions on hold, the sandbox, the
/// shard, and what was written.
fn say_summary(
    options: &Options,
    graded: &[Graded],
    graded_here: usize,
    class_size: usize,
    written: &output::Written,
) {
    print!("{}", report::summary_table(graded, options.tracks));
    let flags = report::flags_listing(graded);
    if !flags.is_empty() {
        print!("\n{flags}");
    }
    println!();
    if options.sandbox {
        println!("every build and test run went through the sandbox (bubblewrap)");
    } else {
        println!("{NO_SANDBOX}");
    }
    if options.shard.count > 1 {
        println!(
            "shard {} of {}: {} of the class's {} submissions; merge the shards with --merge",
            options.shard.index, options.shard.count, graded_here, class_size
        );
    }
    print!("{}", written.leftovers());
    println!(
        "wrote {}, {} (the class report; a page per submission and per claim beside it) and {} \
         results.json files under {}",
        written.gradebook.display(),
        written.index.display(),
        graded.len(),
        options.out.display()
    );
}

/// The result column of a submission whose exercises do not compile.
const DOES_NOT_COMPILE: &str = "does not compile";

/// What every submission is graded with.
struct Context<'a> {
    repository: &'a Path,
    worker: &'a Worker,
    suite: &'a Suite,
    allowed: &'a [PathBuf],
    /// The lab's checkout, after every link: a note may name a path in it.
    lab: &'a Path,
    class: &'a [String],
    /// One submission at a time: its steps are shown as they come.
    streaming: bool,
}

/// One submission, from its files to its score. What goes wrong with the
/// submission is its result; an error is the grader's own trouble (cargo
/// cannot run, the scratch copy cannot be written), which would hit every
/// submission alike and stops the class.
fn grade_one(
    name: &str,
    folder: &Path,
    accepted: bool,
    context: &Context<'_>,
    last_built: &mut Option<Vec<Vec<u8>>>,
) -> Result<Graded, String> {
    let mut graded = ungraded(name, folder, context);
    graded.accepted = accepted;
    // The submission's files, or the untouched stub where one is missing.
    let files = submission::exercise_files(context.suite.scope.tracks);
    let sources = match read_sources(folder, &files, context, &mut graded)? {
        Some(sources) => sources,
        None => return Ok(graded),
    };
    for ((_, file), source) in files.iter().zip(&sources) {
        scratch::write_source(&context.worker.scratch.join(file), source)
            .map_err(|error| format!("cannot write {file} into the scratch copy: {error}"))?;
    }
    if context.streaming {
        progress(format_args!("building… "));
    }
    let Some(executable) = build(name, context, sources, last_built, &mut graded)? else {
        return Ok(graded);
    };
    if context.streaming {
        progress(format_args!("testing… "));
    }
    run(context, &executable, &mut graded)?;
    Ok(graded)
}

/// The submission before it is built: no score yet, and the notes on its
/// folder (the sandbox, a link, what is ignored).
fn ungraded(name: &str, folder: &Path, context: &Context<'_>) -> Graded {
    let mut graded = Graded {
        name: name.to_owned(),
        score: Score::nothing(context.suite.scope, NeverRan::NotBuilt),
        error: None,
        short: String::new(),
        notes: Vec::new(),
        flags: Vec::new(),
        accepted: false,
        submitted: Vec::new(),
        elapsed: Duration::ZERO,
    };
    if context.suite.sandbox.is_none() {
        graded.notes.push(NO_SANDBOX.to_owned());
    }
    if let Some(note) = submission::link_note(
        folder.parent().unwrap_or(folder),
        name,
        context.class,
        context.allowed,
        context.lab,
    ) {
        graded.notes.push(note);
    }
    let ignored = submission::ignored_entries(folder, context.suite.scope.tracks, context.allowed);
    if !ignored.is_empty() {
        graded.notes.push(format!(
            "ignored (only the exercise files are graded): {}",
            ignored.join(", ")
        ));
    }
    graded
}

/// Builds the submission, whose files are `sources`: its test executable,
/// or `None` when it does not build (then `graded` says why).
fn build(
    name: &str,
    context: &Context<'_>,
    sources: Vec<Vec<u8>>,
    last_built: &mut Option<Vec<Vec<u8>>>,
    graded: &mut Graded,
) -> Result<Option<PathBuf>, String> {
    match context.suite.build()? {
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
                    context.worker.scratch.display()
                ));
            }
            *last_built = Some(sources);
            Ok(Some(path))
        }
        Built::CompileError(first_error) => {
            *last_built = None;
            graded.score = Score::nothing(context.suite.scope, NeverRan::DidNotCompile);
            graded.short = DOES_NOT_COMPILE.to_owned();
            graded.error = Some(format!(
                "the exercises do not compile; the first error:\n{first_error}"
            ));
            Ok(None)
        }
        Built::TimedOut(limit) => {
            *last_built = None;
            graded.score = Score::nothing(context.suite.scope, NeverRan::BuildTimedOut);
            graded.short = "build timed out".to_owned();
            graded.error = Some(format!(
                "the build took longer than {} s and was stopped",
                limit.as_secs()
            ));
            Ok(None)
        }
        // Cargo itself failed (a broken manifest, no network for the
        // dependencies): every submission would fail the same way.
        Built::Failed(reason) => Err(format!("cannot build the lab's suite: {reason}")),
    }
}

/// Runs the submission's tests and puts their score, and what the run
/// showed that is worth a note, in `graded`.
fn run(context: &Context<'_>, executable: &Path, graded: &mut Graded) -> Result<(), String> {
    // Lab files a killed run left behind go with it, before the next run
    // (in the sandbox, its private /tmp goes with it anyway).
    let _ = fs::remove_dir_all(&context.worker.tmp);
    fs::create_dir_all(&context.worker.tmp)
        .map_err(|error| format!("cannot create {}: {error}", &context.worker.tmp.display()))?;
    // On hold, its code may have read what it should not have: what the
    // process wrote to stderr waits for the instructor too.
    let ran = context.suite.run(executable, !graded.held())?;
    let _ = fs::remove_dir_all(&context.worker.tmp);
    if ran.forged > 0 {
        graded.notes.push(format!(
            "{} lines on the verdict channel did not carry this run's key and were ignored: \
             something in the test process wrote to it",
            ran.forged
        ));
    }
    if !ran.strays.is_empty() {
        graded.notes.push(format!(
            "verdicts that count for nothing: {}",
            ran.strays.join(", ")
        ));
    }

    graded.score = ran.score;
    if ran.stdout_bytes > 1 << 20 {
        graded.notes.push(format!(
            "the test run printed {:.1} MB to stdout; none of it is read as a verdict",
            ran.stdout_bytes as f64 / 1e6
        ));
    }
    graded.short = match &ran.problem {
        Some((trouble, _)) => trouble.short().to_owned(),
        None => report::short_result(&graded.score),
    };
    if let Some((_, problem)) = ran.problem {
        graded.error = Some(format!("{problem}. Only the claims seen to pass count."));
    }
    Ok(())
}

/// The submission's exercise files, each or the untouched stub where it
/// has none, with its flags, notes and tracks noted in `graded`; `None` when
/// a file is refused (then `graded` says why).
fn read_sources(
    folder: &Path,
    files: &[(Track, String)],
    context: &Context<'_>,
    graded: &mut Graded,
) -> Result<Option<Vec<Vec<u8>>>, String> {
    let mut sources = Vec::new();
    let mut missing = Vec::new();
    for (track, file) in files {
        let file = file.as_str();
        match submission::read(
            folder,
            file,
            (context.allowed, context.lab),
            &mut graded.notes,
        ) {
            Ok(Some(source)) => {
                let text = String::from_utf8_lossy(&source);
                graded.flags.extend(review::scan(file, &text));
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
                return Ok(None);
            }
        }
    }
    if !missing.is_empty() {
        graded.notes.push(format!(
            "not in the submission, graded as the untouched stub: {}",
            missing.join(", ")
        ));
    }
    Ok(Some(sources))
}

fn canonical(path: &Path) -> Result<PathBuf, String> {
    fs::canonicalize(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}

/// Progress on stderr, shown at once.
fn progress(text: std::fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_fmt(text);
    let _ = stderr.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_number_of_jobs_says_why() {
        // Root on two cores with one sandbox account: the accounts decide.
        let why = jobs_reason(1, 2, 2, Some(8));
        assert!(why.contains("sandbox account"), "{why}");
        assert!(why.contains("fencing-grader-2"), "{why}");
        assert_eq!(jobs_reason(2, 2, 2, Some(8)), "one per core, 2 cores");
        assert_eq!(
            jobs_reason(1, 1, 4, Some(1)),
            "free memory allows 1 at 2 GiB each"
        );
        assert_eq!(jobs_reason(4, 4, 16, Some(32)), "at most 4 by default");
    }
}
