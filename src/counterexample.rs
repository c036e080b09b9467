//! The counterexamples: paths that do not go through the contract, so the
//! contract cannot protect them. They are harness code, not exercises: the
//! lab runs them to show where the protection ends.
//!
//! Each is written once, for both destinations: the statements use `$1`,
//! `$2` parameters, which SQLite and PostgreSQL both read, and run through
//! [`Direct`], which each destination's connection implements.

use std::rc::Rc;

use crate::checkpoint::{Checkpoint, Hooks};
use crate::claims::facts::{Answer, Call};
use fencing_lab_api::LabError;

/// A parameter of a counterexample's statement.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    /// An integer (a value, a delta, a generation).
    Int(i64),
    /// A text (a resource's name).
    Text(&'a str),
}

/// A connection the counterexamples use directly, bypassing the learner's
/// code: a worker's or authority's connection on either destination.
pub(crate) trait Direct {
    /// Runs `sql` to its end and returns the first column of its first
    /// row, if it returned one.
    fn query_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<i64>, LabError>;

    /// Runs `sql` for its effect.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), LabError>;

    /// The connection's checkpoints.
    fn hooks(&self) -> Rc<Hooks>;
}

/// The worker-side check: the worker compares the generation it holds with
/// the installed one, and if they match, writes a delta that carries no
/// generation at all. Returns the new value.
///
/// The check and the write are two separate statements, so an install that
/// lands between them (at [`Checkpoint::WorkerChecked`]) goes unnoticed and
/// the stale write gets through. No pause is needed for that: the gap is
/// there however short it is.
pub(crate) fn unfenced_write(
    worker: &mut impl Direct,
    resource: &str,
    held_generation: i64,
    delta: i64,
) -> Result<i64, LabError> {
    // Run like a learner's call: its checkpoints start counting here.
    let hooks = worker.hooks();
    hooks.around(|| {
        let unknown = || LabError::UnknownResource(resource.to_owned());
        let installed = worker
            .query_i64(
                "SELECT generation FROM resources WHERE name = $1",
                &[Param::Text(resource)],
            )?
            .ok_or_else(unknown)?;
        if installed != held_generation {
            return Err(LabError::Stale {
                presented: held_generation,
                installed,
            });
        }
        hooks.reached(Checkpoint::WorkerChecked)?;
        worker
            .query_i64(
                "UPDATE resources SET value = value + $1 WHERE name = $2 RETURNING value",
                &[Param::Int(delta), Param::Text(resource)],
            )?
            .ok_or_else(unknown)
    })
}

/// A direct SQL write that sets a value without `apply`: an operator's fix,
/// a migration, a second service sharing the table. No generation is
/// checked, because nothing asks for one.
pub(crate) fn direct_sql_write(
    session: &mut impl Direct,
    resource: &str,
    value: i64,
) -> Result<(), LabError> {
    let call = Call::DirectWrite {
        resource: resource.to_owned(),
        value,
    };
    as_operator(session, call, |session| {
        session.execute(
            "UPDATE resources SET value = $1 WHERE name = $2",
            &[Param::Int(value), Param::Text(resource)],
        )
    })
}

/// A bad recovery: state restored from an old backup puts an old generation
/// back as the installed one, so the holders of that old generation are
/// accepted again.
pub(crate) fn restore_generation(
    session: &mut impl Direct,
    resource: &str,
    generation: i64,
) -> Result<(), LabError> {
    let call = Call::Restore {
        resource: resource.to_owned(),
        generation,
    };
    as_operator(session, call, |session| {
        session.execute(
            "UPDATE resources SET generation = $1 WHERE name = $2",
            &[Param::Int(generation), Param::Text(resource)],
        )
    })
}

/// Runs an operator's statement on `session` as `call` in the lab's
/// events, the connection named "operator": the pictures of L5.3 and L5.4
/// show who wrote past the contract, and when.
fn as_operator(
    session: &mut impl Direct,
    call: Call,
    run: impl FnOnce(&mut dyn Direct) -> Result<(), LabError>,
) -> Result<(), LabError> {
    let hooks = session.hooks();
    if let Some((trace, actor)) = hooks.tracer() {
        trace.name(actor, "operator");
    }
    hooks.call(
        call,
        |result| match result {
            Ok(()) => Answer::Written,
            Err(_) => Answer::DatabaseError,
        },
        || run(session),
    )
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Int(value) => value.into(),
            Param::Text(text) => text.into(),
        })
    }
}

impl Direct for crate::db::LabConnection {
    fn query_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<i64>, LabError> {
        // Prepared once per connection, like the statements of `Tx`.
        let mut statement = self.connection().prepare_cached(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let first = match rows.next()? {
            Some(row) => Some(row.get(0)?),
            None => None,
        };
        // Step the statement to its end: outside a transaction a write
        // commits only then, and a commit that meets contention is rolled
        // back. Stopping after the row would report a value that never
        // committed.
        while rows.next()?.is_some() {}
        Ok(first)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), LabError> {
        self.connection()
            .execute(sql, rusqlite::params_from_iter(params))?;
        Ok(())
    }

    fn hooks(&self) -> Rc<Hooks> {
        crate::db::LabConnection::hooks(self)
    }
}

/// The parameters as the PostgreSQL client takes them.
#[cfg(feature = "postgres")]
pub(crate) fn pg_params<'a>(
    params: &'a [Param<'a>],
) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|param| -> &(dyn postgres::types::ToSql + Sync) {
            match param {
                Param::Int(value) => value,
                Param::Text(text) => text,
            }
        })
        .collect()
}
