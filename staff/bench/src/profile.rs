//! `--statements`: which statements each path runs and what each costs, on
//! one bare connection, from SQLite's own per-statement profile
//! (`sqlite3_trace_v2` with `SQLITE_TRACE_PROFILE`). In WAL mode it also
//! counts the pages each commit appends to the log.
//!
//! SQLite's profile event comes with a time in milliseconds only, so each
//! statement is timed here from its start event to its profile event.
//!
//! It runs the bench's copies of the paths on a bare connection, not lab
//! connections: a trace callback is one per connection, and the lab's
//! harness may want its own.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use fencing_lab::{Journal, Lab, LabError};
use rusqlite::trace::{TraceEvent, TraceEventCodes};
use rusqlite::{Connection, TransactionBehavior, named_params};

use crate::RESOURCE;
use crate::sqlite::{self, Config};

/// The paths the profile compares, as the bench's copies run them.
const PATHS: [(&str, Path); 5] = [
    ("(a) UPDATE value", Path::Bare),
    ("(b) UPDATE value + INSERT record", Path::Floor),
    ("(c) the reference's statements", Path::Apply),
    ("(c) with the row read once", Path::ApplyOneRead),
    ("(d) a replay of (c)", Path::Replay),
];

#[derive(Debug, Clone, Copy)]
enum Path {
    Bare,
    Floor,
    Apply,
    ApplyOneRead,
    Replay,
}

thread_local! {
    /// Per SQL text: how often it finished and the time it took, in ns.
    static PROFILE: RefCell<Vec<(String, u64, u128)>> = const { RefCell::new(Vec::new()) };
    /// When the running statement started.
    static STARTED: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// SQLite's own profile times statements in milliseconds; the start and
/// end events are timed here in nanoseconds instead.
fn on_trace(event: TraceEvent<'_>) {
    if let TraceEvent::Stmt(..) = event {
        // The first start event of a statement; a trigger's would follow.
        if STARTED.get().is_none() {
            STARTED.set(Some(Instant::now()));
        }
    }
    if let TraceEvent::Profile(statement, _) = event {
        let took = STARTED
            .take()
            .map_or(Duration::ZERO, |started| started.elapsed());
        let sql = statement.sql();
        PROFILE.with_borrow_mut(|profile| {
            match profile.iter_mut().find(|(text, _, _)| *text == sql) {
                Some(entry) => {
                    entry.1 += 1;
                    entry.2 += took.as_nanos();
                }
                None => profile.push((sql.into_owned(), 1, took.as_nanos())),
            }
        });
    }
}

/// One line of SQL, at most `width` characters.
fn short(sql: &str, width: usize) -> String {
    let line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(width) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

fn run_one(conn: &mut Connection, path: Path, i: u64) -> Result<(), LabError> {
    match path {
        Path::Bare => {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.prepare_cached(sqlite::UPDATE_ADD)?
                .execute(named_params! { ":delta": 1, ":name": RESOURCE })?;
            Ok(tx.commit()?)
        }
        Path::Floor => {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            sqlite::floor(&*tx, &format!("p-{i}"))?;
            Ok(tx.commit()?)
        }
        Path::Apply => sqlite::copy_of_reference(conn, &format!("p-{i}"), false),
        Path::ApplyOneRead => sqlite::copy_of_reference(conn, &format!("p-{i}"), true),
        Path::Replay => sqlite::copy_of_reference(conn, "p-replayed", false),
    }
}

/// The profile of every path at `config`, `ops` operations each, as
/// Markdown.
pub fn profile(config: Config, label: &str, ops: u64) -> Result<String, String> {
    let describe = |error: LabError| fencing_lab::describe_error(&error);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "### {label}\n\n| Path | statements/op | in statements, µs/op | whole op, µs | WAL pages/op | statement: times per op × mean µs |\n| --- | ---: | ---: | ---: | ---: | --- |"
    );
    for (name, path) in PATHS {
        let lab = Lab::new(config.journal).map_err(describe)?;
        let mut conn = sqlite::bare_connection(&lab, config).map_err(describe)?;
        if config.journal == Journal::Wal {
            // Keep every frame in the log, to count them.
            conn.execute_batch("PRAGMA wal_autocheckpoint = 0")
                .map_err(|error| error.to_string())?;
        }
        // Warm the page cache and the statement cache; the replay's request
        // is applied once here.
        for i in 0..ops.min(200) {
            run_one(&mut conn, path, 1_000_000 + i).map_err(describe)?;
        }
        // Empties the log: what it holds afterwards, this run wrote.
        wal_frames(&conn, config)?;
        PROFILE.with_borrow_mut(Vec::clear);
        STARTED.set(None);
        conn.trace_v2(
            TraceEventCodes::SQLITE_TRACE_STMT | TraceEventCodes::SQLITE_TRACE_PROFILE,
            Some(on_trace),
        );
        let started = Instant::now();
        for i in 0..ops {
            run_one(&mut conn, path, i).map_err(describe)?;
        }
        let took: Duration = started.elapsed();
        conn.trace_v2(TraceEventCodes::empty(), None);
        let frames = wal_frames(&conn, config)?.map(|frames| frames as f64 / ops as f64);
        let entries = PROFILE.with_borrow_mut(std::mem::take);
        let statements: u64 = entries.iter().map(|(_, count, _)| count).sum();
        let in_statements: u128 = entries.iter().map(|(_, _, ns)| ns).sum();
        let detail: Vec<String> = entries
            .iter()
            .map(|(sql, count, ns)| {
                format!(
                    "`{}` {:.0} × {:.1}",
                    short(sql, 48),
                    *count as f64 / ops as f64,
                    *ns as f64 / *count as f64 / 1000.0
                )
            })
            .collect();
        let _ = writeln!(
            text,
            "| {name} | {:.0} | {:.1} | {:.1} | {} | {} |",
            statements as f64 / ops as f64,
            in_statements as f64 / ops as f64 / 1000.0,
            took.as_secs_f64() * 1e6 / ops as f64,
            frames.map_or_else(|| "–".to_owned(), |frames| format!("{frames:.1}")),
            detail.join("; ")
        );
    }
    Ok(text)
}

/// Frames in the WAL (all kept: no automatic checkpoint), or `None` in
/// rollback mode; then empties the log.
fn wal_frames(conn: &Connection, config: Config) -> Result<Option<i64>, String> {
    if config.journal != Journal::Wal {
        return Ok(None);
    }
    // A passive checkpoint reports the log's size in frames (pages).
    let frames: i64 = conn
        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
        .map_err(|error| error.to_string())?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .map_err(|error| error.to_string())?;
    Ok(Some(frames))
}
