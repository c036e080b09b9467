//! What the guard costs: the reference `apply` against the bare write, on
//! SQLite (both journals, three `synchronous` levels, 1 to 8 contending
//! connections) and, with the feature `postgres`, on PostgreSQL.
//!
//! ```text
//! cargo run --release --manifest-path staff/bench/Cargo.toml -- [--quick] [--out DIR] [--seconds S]
//!     [--rounds N] [--connections 1,2,4,8] [--cases abcde]
//! ```
//!
//! A plain release binary with its own timing, not a `cargo bench` harness:
//! every cell is a multi-threaded run against a file on disk, measured by
//! wall clock over a window, which is what a throughput benchmark needs and
//! what statistical micro-benchmark harnesses do not model. See the book's
//! chapter "What the guard costs" (`book/src/cost.md`).

mod chart;
#[cfg(feature = "postgres")]
mod pg;
mod profile;
mod run;
mod sqlite;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fencing_lab::Journal;
use fencing_lab::durability::Synchronous;

use run::{Cell, Timing};

/// The one resource every path works on.
pub const RESOURCE: &str = "fund-A";

/// What one operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Case {
    /// (a) `UPDATE` the value, in `BEGIN IMMEDIATE`.
    Bare,
    /// (b) `UPDATE` the value and `INSERT` the record.
    Floor,
    /// (c) the reference `apply`, a new request each time.
    Apply,
    /// (d) `apply` of a request applied before: the duplicate's path.
    Replay,
    /// (e) the worker-side check of the lab's counterexample: a read, then
    /// a write, each its own autocommit statement (unsafe).
    WorkerCheck,
    /// (b) on a bare rusqlite connection.
    BareFloor,
    /// (c) on a bare connection: the reference's statements, copied.
    BareApply,
    /// (c) on a bare connection, reading the resource's row once.
    BareApplyOneRead,
    /// (f) PostgreSQL only: `apply` as the reference's PL/pgSQL function
    /// (lesson 8), called by the worker's role: one statement, one round
    /// trip.
    SqlFunction,
}

impl Case {
    /// The five paths the tables compare.
    const MAIN: [Case; 5] = [
        Case::Bare,
        Case::Floor,
        Case::Apply,
        Case::Replay,
        Case::WorkerCheck,
    ];
    /// The harness-overhead paths, on one connection.
    const OVERHEAD: [Case; 3] = [Case::BareFloor, Case::BareApply, Case::BareApplyOneRead];
    /// The paths only a server has, measured beside (a) to (e) there.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    const SERVER: [Case; 1] = [Case::SqlFunction];

    fn letter(self) -> &'static str {
        match self {
            Case::Bare => "a",
            Case::Floor => "b",
            Case::Apply => "c",
            Case::Replay => "d",
            Case::WorkerCheck => "e",
            Case::BareFloor => "b bare",
            Case::BareApply => "c bare",
            Case::BareApplyOneRead => "c bare, one read",
            Case::SqlFunction => "f",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Case::Bare => "(a) UPDATE value",
            Case::Floor => "(b) UPDATE value + INSERT record",
            Case::Apply => "(c) reference apply",
            Case::Replay => "(d) apply, replay",
            Case::WorkerCheck => "(e) worker-side check (unsafe)",
            Case::BareFloor => "(b) on a bare connection",
            Case::BareApply => "(c) copied onto a bare connection",
            Case::BareApplyOneRead => "(c) copied, the row read once",
            Case::SqlFunction => "(f) apply as an SQL function",
        }
    }
}

/// Where a cell ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A lab SQLite file at one setting.
    Sqlite(sqlite::Config),
    /// A lab schema on the PostgreSQL server.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

impl Target {
    fn label(self) -> String {
        match self {
            Target::Sqlite(config) => {
                let journal = match config.journal {
                    Journal::Rollback => "rollback",
                    Journal::Wal => "WAL",
                };
                match config.sync {
                    Synchronous::Off => format!("SQLite {journal}, OFF (the lab's)"),
                    sync => format!("SQLite {journal}, {sync}"),
                }
            }
            Target::Postgres => "PostgreSQL (the lab's server)".to_owned(),
        }
    }
}

/// One measured cell.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    target: Target,
    case: Case,
    connections: usize,
    cell: Cell,
}

struct Options {
    timing: Timing,
    rounds: usize,
    connections: Vec<usize>,
    cases: Vec<Case>,
    out: Option<PathBuf>,
    quick: bool,
    /// Only the destinations whose label contains this text (or one of several, separated by `|`).
    only: Option<String>,
    /// The per-statement profile instead of the throughput cells.
    statements: bool,
    /// Rewrite the report from an earlier run's files instead of measuring.
    report: Option<PathBuf>,
    /// How long to wait before each cell for the load average to fall
    /// below [`run::QUIET`].
    quiet_wait: Duration,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        timing: Timing {
            warmup: Duration::from_millis(200),
            window: Duration::from_millis(1000),
        },
        rounds: 1,
        connections: vec![1, 2, 4, 8],
        cases: Case::MAIN.to_vec(),
        out: None,
        quick: false,
        only: None,
        statements: false,
        report: None,
        quiet_wait: Duration::from_secs(120),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => {
                options.quick = true;
                options.quiet_wait = Duration::ZERO;
                options.timing = Timing {
                    warmup: Duration::from_millis(10),
                    window: Duration::from_millis(40),
                };
            }
            "--seconds" => {
                let seconds: f64 = value()?
                    .parse()
                    .map_err(|_| "--seconds needs a number".to_owned())?;
                if !(0.01..=600.0).contains(&seconds) {
                    return Err("--seconds must be between 0.01 and 600".to_owned());
                }
                options.timing.window = Duration::from_secs_f64(seconds);
            }
            "--rounds" => {
                options.rounds = value()?
                    .parse()
                    .ok()
                    .filter(|rounds| (1..=20).contains(rounds))
                    .ok_or_else(|| "--rounds needs a number from 1 to 20".to_owned())?;
            }
            "--connections" => {
                options.connections = value()?
                    .split(',')
                    .map(|n| n.trim().parse().ok().filter(|n| (1..=64).contains(n)))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        "--connections needs numbers from 1 to 64, e.g. 1,2,4,8".to_owned()
                    })?;
            }
            "--cases" => {
                options.cases = value()?
                    .chars()
                    .map(|letter| {
                        Case::MAIN
                            .into_iter()
                            .find(|case| case.letter() == letter.to_string())
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| "--cases takes letters among abcde".to_owned())?;
            }
            "--quiet-wait" => {
                let seconds: u64 = value()?
                    .parse()
                    .ok()
                    .filter(|seconds| *seconds <= 3600)
                    .ok_or_else(|| "--quiet-wait needs seconds from 0 to 3600".to_owned())?;
                options.quiet_wait = Duration::from_secs(seconds);
            }
            "--out" => options.out = Some(PathBuf::from(value()?)),
            "--only" => options.only = Some(value()?),
            "--statements" => options.statements = true,
            "--report" => options.report = Some(PathBuf::from(value()?)),
            "--help" | "-h" => {
                println!(
                    "usage: fencing-bench [--quick] [--out DIR] [--seconds S] [--rounds N] \
                     [--connections 1,2,4,8] [--cases abcde] [--only TEXT] [--statements] [--report DIR] \
                     [--quiet-wait S]\n\
                     --only keeps the destinations whose label contains TEXT, e.g. \"WAL, OFF\" \
                     (several: \"OFF|WAL, NORMAL\")\n\
                     --statements profiles each path's statements on one connection instead\n\
                     --report DIR writes the report and chart again from DIR's results.csv\n\
                     --quiet-wait S waits up to S seconds (default 120, 0 with --quick) before each \
                     cell for the load average to fall below 0.5; a cell that starts above it is \
                     left out of the summaries"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    // The harness calls the reference through the table handed to it.
    fencing_lab::wire(fencing_lab_exercises::IMPLEMENTATION);
    match parse_options().and_then(|options| bench(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fencing-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn sqlite_configs() -> Vec<sqlite::Config> {
    let mut configs = Vec::new();
    for journal in [Journal::Rollback, Journal::Wal] {
        for sync in [Synchronous::Full, Synchronous::Normal, Synchronous::Off] {
            configs.push(sqlite::Config { journal, sync });
        }
    }
    configs
}

fn bench(options: &Options) -> Result<(), String> {
    if options.statements {
        return statements(options);
    }
    if let Some(dir) = &options.report {
        return report_again(dir);
    }
    let started = Instant::now();
    let load_before = load_average();
    let mut plan: Vec<(Target, Case, usize)> = Vec::new();
    for config in sqlite_configs() {
        for &connections in &options.connections {
            for &case in &options.cases {
                plan.push((Target::Sqlite(config), case, connections));
            }
        }
        // The harness's overhead: the same work on a bare connection.
        if options.connections.contains(&1) {
            for case in Case::OVERHEAD {
                plan.push((Target::Sqlite(config), case, 1));
            }
        }
    }
    let keep = |target: Target| {
        options
            .only
            .as_ref()
            .is_none_or(|only| matches_only(only, &target.label()))
    };
    plan.retain(|&(target, _, _)| keep(target));
    #[cfg(feature = "postgres")]
    let server = match keep(Target::Postgres) {
        true => Some(pg::describe_server()?),
        false => None,
    };
    #[cfg(feature = "postgres")]
    if server.is_some() {
        // (f) beside (c), whenever (c) is measured.
        let server_cases = Case::SERVER
            .into_iter()
            .filter(|_| options.cases.contains(&Case::Apply));
        let cases: Vec<Case> = options.cases.iter().copied().chain(server_cases).collect();
        for &connections in &options.connections {
            for &case in &cases {
                plan.push((Target::Postgres, case, connections));
            }
        }
        if options.connections.contains(&1) {
            for case in Case::OVERHEAD {
                plan.push((Target::Postgres, case, 1));
            }
        }
    }

    // Round after round over the whole plan, so a noisy moment on a shared
    // machine hits one round of many cells rather than every round of one.
    let mut rounds: Vec<Vec<Cell>> = vec![Vec::new(); plan.len()];
    for round in 0..options.rounds {
        for (index, &(target, case, connections)) in plan.iter().enumerate() {
            let load_before = wait_for_quiet(options.quiet_wait);
            let mut cell = match target {
                Target::Sqlite(config) => {
                    sqlite::measure(config, case, connections, options.timing)
                }
                #[cfg(feature = "postgres")]
                Target::Postgres => pg::measure(case, connections, options.timing),
                #[cfg(not(feature = "postgres"))]
                Target::Postgres => unreachable!("no PostgreSQL cell without the feature"),
            }
            .map_err(|error| {
                format!(
                    "{}, {}, {connections} connections: {error}",
                    target.label(),
                    case.label()
                )
            })?;
            cell.load_before = load_before;
            eprintln!(
                "round {}/{} {:<32} {:<34} {connections} conn {:>9.0} ops/s  p50 {:>8.1} µs  p99 {:>8.1} µs  retries/op {:.2}  load before {}",
                round + 1,
                options.rounds,
                target.label(),
                case.label(),
                cell.ops_per_sec(),
                cell.p50_us,
                cell.p99_us,
                cell.retries_per_op(),
                load_text(Some(cell)),
            );
            rounds[index].push(cell);
        }
    }
    // Per cell, the round with the median throughput.
    let rows: Vec<Row> = plan
        .iter()
        .zip(rounds)
        .map(|(&(target, case, connections), mut cells)| {
            cells.sort_by(|x, y| x.ops_per_sec().total_cmp(&y.ops_per_sec()));
            Row {
                target,
                case,
                connections,
                cell: cells[cells.len() / 2],
            }
        })
        .collect();

    let mut machine = machine(options, load_before, started.elapsed());
    #[cfg(feature = "postgres")]
    let postgres = server.unwrap_or_else(|| "not measured (left out by --only)".to_owned());
    #[cfg(not(feature = "postgres"))]
    let postgres = "not measured (feature `postgres` off)";
    let _ = writeln!(machine, "- PostgreSQL: {postgres}");
    write_results(options.out.as_deref(), &machine, &rows)
}

/// Prints the report and, with `out`, writes the report, the cells and the
/// chart there.
fn write_results(out: Option<&std::path::Path>, machine: &str, rows: &[Row]) -> Result<(), String> {
    let report = report(machine, rows);
    println!("{report}");
    if let Some(out) = out {
        fs::create_dir_all(out)
            .map_err(|error| format!("cannot create {}: {error}", out.display()))?;
        let write = |name: &str, text: String| {
            let path = out.join(name);
            fs::write(&path, text)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))
        };
        write("results.md", report)?;
        write("machine.md", machine.to_owned())?;
        write("results.csv", csv(rows))?;
        write("throughput.svg", chart::svg(rows))?;
        eprintln!(
            "wrote results.md, machine.md, results.csv and throughput.svg to {}",
            out.display()
        );
    }
    Ok(())
}

/// `--report DIR`: the report and the chart again, from the `results.csv`
/// and `machine.md` a run wrote to DIR, without measuring anything.
fn report_again(dir: &std::path::Path) -> Result<(), String> {
    let read = |name: &str| {
        let path = dir.join(name);
        fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))
    };
    let machine = read("machine.md")?;
    let mut targets: Vec<Target> = sqlite_configs().into_iter().map(Target::Sqlite).collect();
    targets.push(Target::Postgres);
    let cases = Case::MAIN
        .into_iter()
        .chain(Case::OVERHEAD)
        .chain(Case::SERVER);
    let cases: Vec<Case> = cases.collect();
    let mut rows = Vec::new();
    for (number, line) in read("results.csv")?.lines().enumerate().skip(1) {
        let bad = || format!("results.csv line {}: cannot read {line:?}", number + 1);
        let fields = csv_fields(line);
        let field = |index: usize| fields.get(index).map(String::as_str).ok_or_else(bad);
        let number_at = |index: usize| field(index)?.parse::<f64>().map_err(|_| bad());
        let optional = |index: usize| field(index).map(|text| text.parse::<f64>().ok());
        let target = *targets
            .iter()
            .find(|target| target.label() == field(0).unwrap_or_default())
            .ok_or_else(bad)?;
        let case = *cases
            .iter()
            .find(|case| case.label() == field(1).unwrap_or_default())
            .ok_or_else(bad)?;
        rows.push(Row {
            target,
            case,
            connections: number_at(2)? as usize,
            cell: Cell {
                ops: number_at(3)? as usize,
                seconds: number_at(4)?,
                p50_us: number_at(6)?,
                p99_us: number_at(7)?,
                retries: number_at(8)? as u64,
                committed: 0,
                cpu_us_per_op: optional(9)?,
                cpu_wait_share: optional(10)?,
                load_before: field(11).ok().and_then(|text| text.parse().ok()),
            },
        });
    }
    write_results(Some(dir), &machine, &rows)
}

/// The fields of one line of `results.csv` (labels are quoted, numbers not).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

/// Whether `label` contains one of the `|`-separated texts of `--only`.
fn matches_only(only: &str, label: &str) -> bool {
    only.split('|').any(|text| label.contains(text))
}

/// `--statements`: the per-statement profile of every SQLite setting.
fn statements(options: &Options) -> Result<(), String> {
    let mut text = String::from(
        "# What the guard costs: statement by statement\n\n\
         One bare connection, the bench's copies of the paths, SQLite's own per-statement \
         trace (`sqlite3_trace_v2`), each statement timed from its start event to its \
         profile event (its reset), so COMMIT includes waiting for the disk. WAL pages/op: frames appended to \
         the log per operation.\n\n",
    );
    for config in sqlite_configs() {
        let label = Target::Sqlite(config).label();
        if options
            .only
            .as_ref()
            .is_some_and(|only| !matches_only(only, &label))
        {
            continue;
        }
        let ops = match (options.quick, config.sync) {
            (true, _) => 30,
            (false, Synchronous::Full) => 300,
            (false, _) => 3000,
        };
        eprintln!("profiling {label}, {ops} operations per path");
        text.push_str(&profile::profile(config, &label, ops)?);
        text.push('\n');
    }
    println!("{text}");
    if let Some(out) = &options.out {
        fs::create_dir_all(out)
            .map_err(|error| format!("cannot create {}: {error}", out.display()))?;
        let path = out.join("statements.md");
        fs::write(&path, text)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The 1-minute load average, if the kernel tells it.
fn load_now() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Waits up to `limit` for the 1-minute load average to fall below
/// [`run::QUIET`], and returns it as it then is.
fn wait_for_quiet(limit: Duration) -> Option<f64> {
    let started = Instant::now();
    loop {
        let load = load_now();
        if load.is_none_or(|load| load < run::QUIET) || started.elapsed() >= limit {
            return load;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The 1-, 5- and 15-minute load averages, and the kernel's pressure
/// figures (the share of the last minute some task waited for a processor,
/// or for the disk), to show how busy the machine was.
fn load_average() -> String {
    let load = fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned());
    let pressure = |resource: &str| {
        fs::read_to_string(format!("/proc/pressure/{resource}"))
            .ok()
            .and_then(|text| {
                let some = text.lines().find(|line| line.starts_with("some"))?;
                let avg60 = some
                    .split_whitespace()
                    .find_map(|field| field.strip_prefix("avg60="))?;
                Some(format!("{avg60}%"))
            })
            .unwrap_or_else(|| "unknown".to_owned())
    };
    format!(
        "{load} (pressure over the last minute: processor {}, disk {})",
        pressure("cpu"),
        pressure("io")
    )
}

/// The machine and the run, as the results' header.
fn machine(options: &Options, load_before: String, took: Duration) -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|text| text.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    let temp = std::env::temp_dir();
    let mut text = String::new();
    let _ = writeln!(text, "- CPU: {model}, {cpus} logical processors available");
    let _ = writeln!(
        text,
        "- Linux {kernel}; lab files under {} on {}",
        temp.display(),
        file_system(&temp)
    );
    let _ = writeln!(text, "- SQLite {} (rusqlite, bundled)", rusqlite::version());
    let _ = writeln!(
        text,
        "- each cell: {} ms warm-up, {} ms measured, median of {} round(s){}; load average before {load_before}, after {}; the run took {:.0} s",
        options.timing.warmup.as_millis(),
        options.timing.window.as_millis(),
        options.rounds,
        if options.quick {
            " (--quick: a smoke run, not numbers to quote)"
        } else {
            ""
        },
        load_average(),
        took.as_secs_f64()
    );
    text
}

/// The type of the file system holding `path`, from `/proc/mounts`.
fn file_system(path: &std::path::Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (device, mount, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(mount)
                .then(|| (mount.len(), format!("{kind} ({device})")))
        })
        .max()
        .map_or_else(|| "an unknown file system".to_owned(), |(_, kind)| kind)
}

/// The cell of `case` on `target` with `connections`, unless it was
/// disturbed: what a summary, a ratio or the chart may quote.
fn find(rows: &[Row], target: Target, case: Case, connections: usize) -> Option<Cell> {
    rows.iter()
        .find(|row| row.target == target && row.case == case && row.connections == connections)
        .map(|row| row.cell)
        .filter(|cell| !cell.disturbed())
}

/// The targets in the order they were measured.
fn targets(rows: &[Row]) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    for row in rows {
        if !targets.contains(&row.target) {
            targets.push(row.target);
        }
    }
    targets
}

/// Mean time of `case` over mean time of `base`: ops/s of `base` over ops/s
/// of `case`.
fn cost_ratio(
    rows: &[Row],
    target: Target,
    case: Case,
    base: Case,
    connections: usize,
) -> Option<f64> {
    let case = find(rows, target, case, connections)?;
    let base = find(rows, target, base, connections)?;
    (case.ops > 0).then(|| base.ops_per_sec() / case.ops_per_sec())
}

/// Processor time per operation of `case` over that of `base`.
fn cpu_ratio(
    rows: &[Row],
    target: Target,
    case: Case,
    base: Case,
    connections: usize,
) -> Option<f64> {
    let case = find(rows, target, case, connections)?.cpu_us_per_op?;
    let base = find(rows, target, base, connections)?.cpu_us_per_op?;
    (base > 0.0).then(|| case / base)
}

/// Median latency of `case` over that of `base`, on one connection: the
/// median leaves out the operations a busy machine stalled.
fn p50_ratio(rows: &[Row], target: Target, case: Case, base: Case) -> Option<f64> {
    let case = find(rows, target, case, 1)?.p50_us;
    let base = find(rows, target, base, 1)?.p50_us;
    (base > 0.0).then(|| case / base)
}

fn ratio_text(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "–".to_owned(), |ratio| format!("{ratio:.2}"))
}

fn cpu_text(cell: Option<Cell>) -> String {
    cell.and_then(|cell| cell.cpu_us_per_op)
        .map_or_else(|| "–".to_owned(), |us| format!("{us:.1}"))
}

fn ops_text(cell: Option<Cell>) -> String {
    cell.map_or_else(
        || "–".to_owned(),
        |cell| format!("{:.0}", cell.ops_per_sec()),
    )
}

fn load_text(cell: Option<Cell>) -> String {
    match cell.and_then(|cell| cell.load_before) {
        None => "–".to_owned(),
        Some(load) if load >= run::QUIET => format!("{load:.2} (disturbed: left out)"),
        Some(load) => format!("{load:.2}"),
    }
}

fn share_text(cell: Option<Cell>) -> String {
    cell.and_then(|cell| cell.cpu_wait_share)
        .map_or_else(|| "–".to_owned(), |share| format!("{:.0}%", share * 100.0))
}

/// The Markdown report: the summary table, the ratios and the overhead on
/// one connection, then every cell.
fn report(machine: &str, rows: &[Row]) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "# What the guard costs: results\n\n{machine}");
    let _ = writeln!(
        text,
        "## Throughput\n\nOperations per second, by the wall clock (higher is better). \
         (c)/(b) and (c)/(a) are cost ratios: the mean time of (c) over that of (b) or (a). \
         Retries: contention retries per operation of (c).\n"
    );
    let _ = writeln!(
        text,
        "| LabConnection | Conns | (a) UPDATE | (b) + record | (c) apply | (d) replay | (e) worker check | (c)/(b) | (c)/(a) | retries (c) |"
    );
    let _ = writeln!(
        text,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for target in targets(rows) {
        for n in connections_of(rows, target) {
            let _ = write!(text, "| {} | {n} |", target.label());
            for case in Case::MAIN {
                let _ = write!(text, " {} |", ops_text(find(rows, target, case, n)));
            }
            let retries = find(rows, target, Case::Apply, n).map_or_else(
                || "–".to_owned(),
                |cell| format!("{:.2}", cell.retries_per_op()),
            );
            let _ = writeln!(
                text,
                " {} | {} | {retries} |",
                ratio_text(cost_ratio(rows, target, Case::Apply, Case::Floor, n)),
                ratio_text(cost_ratio(rows, target, Case::Apply, Case::Bare, n)),
            );
        }
    }

    let _ = writeln!(
        text,
        "\n## One connection: what each path costs\n\n\
         Processor time per operation in µs (the thread's own time on a processor, from \
         the kernel's scheduler statistics; time spent waiting for the disk is not in it), \
         then the cost ratios by the wall clock (mean time), by median latency and by \
         processor time. The last column is \
         the share of the time the thread was ready but waited for a processor: how much \
         other programs on the machine disturbed the wall clock.\n"
    );
    let _ = writeln!(
        text,
        "| LabConnection | (a) CPU µs | (b) | (c) | (d) | (e) | (c)/(b) wall | p50 | CPU | (c)/(a) wall | p50 | CPU | waited for CPU (c) |"
    );
    let _ = writeln!(
        text,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for target in targets(rows) {
        if find(rows, target, Case::Apply, 1).is_none() {
            continue;
        }
        let _ = write!(text, "| {} |", target.label());
        for case in Case::MAIN {
            let _ = write!(text, " {} |", cpu_text(find(rows, target, case, 1)));
        }
        let _ = writeln!(
            text,
            " {} | {} | {} | {} | {} | {} | {} |",
            ratio_text(cost_ratio(rows, target, Case::Apply, Case::Floor, 1)),
            ratio_text(p50_ratio(rows, target, Case::Apply, Case::Floor)),
            ratio_text(cpu_ratio(rows, target, Case::Apply, Case::Floor, 1)),
            ratio_text(cost_ratio(rows, target, Case::Apply, Case::Bare, 1)),
            ratio_text(p50_ratio(rows, target, Case::Apply, Case::Bare)),
            ratio_text(cpu_ratio(rows, target, Case::Apply, Case::Bare, 1)),
            share_text(find(rows, target, Case::Apply, 1)),
        );
    }

    if targets(rows)
        .into_iter()
        .any(|target| find(rows, target, Case::SqlFunction, 1).is_some())
    {
        let _ = writeln!(
            text,
            "\n## The contract inside the database (PostgreSQL)\n\n\
             (f) is `apply` as the reference's PL/pgSQL function (lesson 8, \
             `solutions/postgres/contract.sql`), called by the worker's role as one statement: \
             one round trip where (c) takes one per statement. Operations per second, then \
             (f) and (c) over (b) by the wall clock, by median latency and by processor time \
             (the client's: the server's work is in the wall clock, not in CPU).\n"
        );
        let _ = writeln!(
            text,
            "| LabConnection | Conns | (b) + record | (c) apply | (f) SQL function | (f)/(b) wall | p50 | CPU | (c)/(b) wall | p50 | CPU |"
        );
        let _ = writeln!(
            text,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for target in targets(rows) {
            for n in connections_of(rows, target) {
                if find(rows, target, Case::SqlFunction, n).is_none() {
                    continue;
                }
                let p50 = |case| match n {
                    1 => ratio_text(p50_ratio(rows, target, case, Case::Floor)),
                    _ => "–".to_owned(),
                };
                let _ = writeln!(
                    text,
                    "| {} | {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    target.label(),
                    ops_text(find(rows, target, Case::Floor, n)),
                    ops_text(find(rows, target, Case::Apply, n)),
                    ops_text(find(rows, target, Case::SqlFunction, n)),
                    ratio_text(cost_ratio(rows, target, Case::SqlFunction, Case::Floor, n)),
                    p50(Case::SqlFunction),
                    ratio_text(cpu_ratio(rows, target, Case::SqlFunction, Case::Floor, n)),
                    ratio_text(cost_ratio(rows, target, Case::Apply, Case::Floor, n)),
                    p50(Case::Apply),
                    ratio_text(cpu_ratio(rows, target, Case::Apply, Case::Floor, n)),
                );
            }
        }
    }

    let _ = writeln!(
        text,
        "\n## The harness's overhead, one connection\n\n\
         The same work through a lab `LabConnection` and on a bare rusqlite connection to the \
         same file (the same statements and settings): operations per second, then the lab's \
         cost over the bare connection's, by the wall clock and by processor time. The last \
         two columns are the reference's statements on the bare connection over (b) there, \
         as written and with the resource's row read once instead of twice. On PostgreSQL the \
         bare sessions prepare each statement once (one round trip per statement) where the \
         lab's send its text every time (two), and \"row read once\" locks and reads the row \
         in one statement: there lab/bare measures that statement style, not instrumentation.\n"
    );
    let _ = writeln!(
        text,
        "| LabConnection | (b) lab | (b) bare | (c) lab | (c) bare | (c) bare, row read once | lab/bare (b) wall, CPU | lab/bare (c) wall, CPU | bare (c)/(b) CPU | bare (c) one read/(b) CPU |"
    );
    let _ = writeln!(
        text,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for target in targets(rows) {
        if find(rows, target, Case::BareApply, 1).is_none() {
            continue;
        }
        let ops = |case| ops_text(find(rows, target, case, 1));
        let both = |case, base| {
            format!(
                "{}, {}",
                ratio_text(cost_ratio(rows, target, case, base, 1)),
                ratio_text(cpu_ratio(rows, target, case, base, 1))
            )
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            target.label(),
            ops(Case::Floor),
            ops(Case::BareFloor),
            ops(Case::Apply),
            ops(Case::BareApply),
            ops(Case::BareApplyOneRead),
            both(Case::Floor, Case::BareFloor),
            both(Case::Apply, Case::BareApply),
            ratio_text(cpu_ratio(rows, target, Case::BareApply, Case::BareFloor, 1)),
            ratio_text(cpu_ratio(
                rows,
                target,
                Case::BareApplyOneRead,
                Case::BareFloor,
                1
            )),
        );
    }

    let _ = writeln!(
        text,
        "\n## Every cell\n\nLatency is per operation, contention retries and back-off \
         included. CPU µs: processor time per operation, all threads together. Load before: \
         the 1-minute load average when the cell started; a cell that started at {} or above \
         is disturbed, and left out of the tables above and of the chart (\"–\").\n",
        run::QUIET
    );
    let _ = writeln!(
        text,
        "| LabConnection | Path | Conns | ops/s | p50 µs | p99 µs | retries/op | CPU µs/op | waited for CPU | load before |"
    );
    let _ = writeln!(
        text,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for row in rows {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.2} | {} | {} | {} |",
            row.target.label(),
            row.case.label(),
            row.connections,
            row.cell.ops_per_sec(),
            row.cell.p50_us,
            row.cell.p99_us,
            row.cell.retries_per_op(),
            cpu_text(Some(row.cell)),
            share_text(Some(row.cell)),
            load_text(Some(row.cell)),
        );
    }
    text
}

/// The connection counts measured on `target`, ascending.
pub fn connections_of(rows: &[Row], target: Target) -> Vec<usize> {
    let mut connections: Vec<usize> = rows
        .iter()
        .filter(|row| row.target == target && Case::MAIN.contains(&row.case))
        .map(|row| row.connections)
        .collect();
    connections.sort_unstable();
    connections.dedup();
    connections
}

/// Every cell, one line each.
fn csv(rows: &[Row]) -> String {
    let mut text = String::from(
        "destination,path,connections,ops,seconds,ops_per_sec,p50_us,p99_us,retries,cpu_us_per_op,cpu_wait_share,load_before\n",
    );
    for row in rows {
        let _ = writeln!(
            text,
            "\"{}\",\"{}\",{},{},{},{:.1},{:.1},{:.1},{},{},{},{}",
            row.target.label(),
            row.case.label(),
            row.connections,
            row.cell.ops,
            row.cell.seconds,
            row.cell.ops_per_sec(),
            row.cell.p50_us,
            row.cell.p99_us,
            row.cell.retries,
            row.cell
                .cpu_us_per_op
                .map_or_else(String::new, |us| format!("{us:.2}")),
            row.cell
                .cpu_wait_share
                .map_or_else(String::new, |share| format!("{share:.3}")),
            row.cell
                .load_before
                .map_or_else(String::new, |load| format!("{load:.2}")),
        );
    }
    text
}
