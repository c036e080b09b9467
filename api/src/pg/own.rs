//! SQL of the code's own ([`PgTx::sql`](super::PgTx::sql)): run as written,
//! and, while a test watches the call, read back through the server's plan
//! of it so that a read of the generation or of a record reaches its
//! checkpoint however it was written.
//!
//! PostgreSQL has no trigger on `SELECT`, so the harness asks the server
//! instead: once a statement of the code's own has returned (holding the
//! row locks it took), `EXPLAIN (VERBOSE)` of the same statement with the
//! same parameters names every column each step of the plan reads, in its
//! output, filter or index condition. A plan that reads `resources`'s
//! `generation` column is a read of the generation
//! ([`Read::Generation`]); one that scans `requests`, or checks it for a
//! conflict (`ON CONFLICT`), is a lookup of a record ([`Read::Record`]); a
//! statement that writes nothing and reads `resources` without its
//! generation is a read of the value alone ([`Read::Value`]). This is what SQLite's authorizer tells the
//! SQLite lab about each statement. A statement that reads the generation
//! only inside its own write (one conditional `UPDATE`) fires its read
//! checkpoint after that write, with the row still locked by it: there is
//! no moment between its read and its write to pause at, and none is
//! needed.
//!
//! The plan is asked for inside a savepoint, so that whatever the server
//! thinks of the question, the code's transaction is never harmed by it;
//! and in every call, watched or not: asked only while a test watches, the
//! question would tell the code under test that it is watched (its
//! session would run one more statement, which SQL can notice), and a
//! contract could lock only then. The learner's loop pays a round trip per
//! statement of its own for it.

use postgres::Row;
use postgres::types::ToSql;

use super::{Observer, Read};

/// SQL of the code's own inside a [`PgTx`](super::PgTx): the methods of a
/// `postgres::Transaction` that run one statement, plus `batch_execute`.
/// Errors are the client's ([`sql::Error`](super::sql::Error)), which `?`
/// turns into a [`LabError`](crate::LabError) (55P03 into `Contention`);
/// before that, `error.code()` is the SQLSTATE, to compare with
/// [`sql::SqlState`](super::sql::SqlState)'s constants.
pub struct OwnSql<'t, 'a> {
    /// The transaction the statements run in.
    tx: &'t mut postgres::Transaction<'a>,
    /// Where the read checkpoints go.
    link: &'t dyn Observer,
}

/// A statement's parameters, as the client takes them.
type Params<'p> = [&'p (dyn ToSql + Sync)];

impl<'t, 'a> OwnSql<'t, 'a> {
    pub(super) fn new(tx: &'t mut postgres::Transaction<'a>, link: &'t dyn Observer) -> Self {
        OwnSql { tx, link }
    }

    /// Runs one statement and returns how many rows it changed.
    pub fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, postgres::Error> {
        let changed = self.tx.execute(sql, params)?;
        self.after(sql, params);
        Ok(changed)
    }

    /// Runs one statement and returns its rows.
    pub fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, postgres::Error> {
        let rows = self.tx.query(sql, params)?;
        self.after(sql, params);
        Ok(rows)
    }

    /// Runs one statement that returns exactly one row.
    pub fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, postgres::Error> {
        let rows = self.query(sql, params)?;
        // The client's own error for a wrong number of rows.
        match <[Row; 1]>::try_from(rows) {
            Ok([row]) => Ok(row),
            Err(_) => self.tx.query_one("SELECT 1 WHERE false", &[]),
        }
    }

    /// Runs one statement that returns at most one row.
    pub fn query_opt(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        let mut rows = self.query(sql, params)?;
        match rows.len() {
            0 => Ok(None),
            1 => Ok(rows.pop()),
            // The client's own error for a wrong number of rows.
            _ => self.tx.query_opt("SELECT 1 UNION ALL SELECT 1", &[]),
        }
    }

    /// Runs several statements, separated by `;`, without parameters. The
    /// harness cannot ask the plan of a batch: a test that needed to pause
    /// right after a read made here says so (NOT CHECKED) instead.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.tx.batch_execute(sql)?;
        if self.link.watching() {
            self.link.note_unread();
        }
        Ok(())
    }

    /// After a statement returned: fire the read checkpoints its plan has.
    /// The plan is asked for in every call alike (see the module's docs).
    fn after(&mut self, sql: &str, params: &Params<'_>) {
        let reads = reads(self.tx, sql, params);
        if !self.link.watching() {
            return;
        }
        match reads {
            Some(reads) => {
                if reads.generation {
                    self.link.read_by_own_sql(Read::Generation);
                }
                if reads.record {
                    self.link.read_by_own_sql(Read::Record);
                }
                if reads.value {
                    self.link.read_by_own_sql(Read::Value);
                }
            }
            None => self.link.note_unread(),
        }
    }
}

/// What a statement's plan reads, as far as the checkpoints go.
#[derive(Debug, Default, PartialEq, Eq)]
struct Reads {
    /// `resources.generation`, in any part of the plan.
    generation: bool,
    /// The `requests` table: a scan of it, or a conflict check against it.
    record: bool,
    /// `resources`'s value read without its generation by a statement that
    /// writes nothing: a read of the value alone. (A write that reads the value,
    /// `SET value = value + $1`, holds the row's lock from its read on.)
    value: bool,
}

/// What `sql` reads, from the server's plan of it, or `None` if the harness
/// cannot ask (a statement that has no plan, such as `DO`, or one whose
/// plan the server would not give).
fn reads(tx: &mut postgres::Transaction<'_>, sql: &str, params: &Params<'_>) -> Option<Reads> {
    match first_word(sql).as_deref() {
        Some("select" | "insert" | "update" | "delete" | "with" | "values" | "table") => {}
        // Statements that read no table.
        Some("set" | "reset" | "show" | "lock" | "savepoint" | "release" | "rollback") => {
            return Some(Reads::default());
        }
        _ => return None,
    }
    let mut savepoint = tx.savepoint("fencing_lab_plan").ok()?;
    let plan: Vec<String> = savepoint
        .query(&format!("EXPLAIN (VERBOSE, COSTS OFF) {sql}"), params)
        .ok()?
        .iter()
        .filter_map(|row| row.try_get::<_, String>(0).ok())
        .collect();
    savepoint.commit().ok()?;
    Some(classify(&plan))
}

/// The first keyword of `sql`, lowercased, after spaces, comments and
/// opening parentheses.
fn first_word(sql: &str) -> Option<String> {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, next)| next);
        } else {
            break;
        }
    }
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    (!word.is_empty()).then(|| word.to_ascii_lowercase())
}

/// Reads a plan, one line of `EXPLAIN (VERBOSE)` text per item.
///
/// The server qualifies a column in an output with its table's name (or
/// alias) only when the plan reads more than one table: alone,
/// `resources`'s generation is plain `generation`; beside `requests`, which
/// has a column of that name too, it is `resources.generation` (or
/// `r.generation`). Conditions are always qualified.
fn classify(plan: &[String]) -> Reads {
    // Every name the plan gives the tables it reads: the table's own, or
    // an alias (`… on lab_1.resources r`).
    let mut resources = Vec::new();
    let mut others = false;
    let mut record = false;
    let mut writes = false;
    for line in plan {
        let node = line.trim_start().trim_start_matches("->").trim_start();
        writes |= ["Update on ", "Insert on ", "Delete on ", "Merge on "]
            .iter()
            .any(|write| node.starts_with(write));
        if line.contains("Conflict Resolution") || line.contains("Conflict Arbiter") {
            record = true;
        }
        let Some((node, target)) = line.split_once(" on ") else {
            continue;
        };
        let mut words = target.split_whitespace();
        let Some(relation) = words.next() else {
            continue;
        };
        let table = relation.rsplit('.').next().unwrap_or(relation);
        let alias = words.next().unwrap_or(table).to_owned();
        match table {
            "resources" => resources.push(alias),
            "requests" => {
                others = true;
                record |= node.contains("Scan");
            }
            _ => others = true,
        }
    }
    // Conditions are qualified even with one table; outputs are not.
    let reads_column = |column: &str| {
        // A whole row (`to_jsonb(r)`, `SELECT r`, `row_to_json(resources)`)
        // shows in the plan as `r.*`: it reads every column.
        let qualified = |line: &String| {
            resources.iter().any(|alias| {
                mentions(line, &format!("{alias}."), column) || line.contains(&format!("{alias}.*"))
            })
        };
        match (resources.is_empty(), others) {
            (true, _) => false,
            (false, false) => plan
                .iter()
                .any(|line| mentions(line, "", column) || qualified(line)),
            (false, true) => plan.iter().any(qualified),
        }
    };
    let generation = reads_column("generation");
    // A row lock alone (`SELECT 1 … FOR UPDATE`) reads no value.
    let value = !generation && !writes && reads_column("value");
    Reads {
        generation,
        record,
        value,
    }
}

/// Whether `line` names the column `column`, written `prefix` + `column`
/// as a whole word (an unqualified one when `prefix` is empty).
fn mentions(line: &str, prefix: &str, column: &str) -> bool {
    let word = format!("{prefix}{column}");
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '"';
    line.match_indices(&word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}
