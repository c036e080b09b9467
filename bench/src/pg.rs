//! The paths on PostgreSQL (feature `postgres`): (a) to (e) through lab
//! sessions (`PgDestination`) on the lab's private server, or the one named
//! by `FENCING_LAB_PG_URL`.

use fencing_lab::pg::counterexample::unfenced_write;
use fencing_lab::pg::{self, PgLab};
use fencing_lab::{LabError, Outcome};

use crate::run::{Cell, Op, Timing, run};
use crate::{Case, RESOURCE};

/// Where the server came from and its version, for the results' header.
pub fn describe_server() -> Result<String, String> {
    let server = pg::server::shared().map_err(|error| fencing_lab::describe_error(&error))?;
    let lab = PgLab::new().map_err(|error| fencing_lab::describe_error(&error))?;
    let mut db = lab
        .connect()
        .map_err(|error| fencing_lab::describe_error(&error))?;
    let tx = db
        .begin()
        .map_err(|error| fencing_lab::describe_error(&error))?;
    let mut tx = tx;
    let row = tx
        .sql()
        .query_one(
            "SELECT current_setting('server_version'), current_setting('fsync'), \
             current_setting('synchronous_commit')",
            &[],
        )
        .map_err(|error| error.to_string())?;
    let (version, fsync, commit): (String, String, String) = (row.get(0), row.get(1), row.get(2));
    Ok(format!(
        "PostgreSQL {version}, {}, fsync = {fsync}, synchronous_commit = {commit}",
        server.origin
    ))
}

/// Measures `case` on a fresh lab schema with `connections` sessions.
pub fn measure(case: Case, connections: usize, timing: Timing) -> Result<Cell, String> {
    let lab = PgLab::new().map_err(|error| fencing_lab::describe_error(&error))?;
    let cell = run(connections, timing, |thread| setup(&lab, case, thread))?;
    let value = lab
        .state(RESOURCE)
        .map_err(|error| fencing_lab::describe_error(&error))?
        .value;
    let records = lab
        .records(RESOURCE)
        .map_err(|error| fencing_lab::describe_error(&error))?
        .len() as u64;
    let want = match case {
        Case::Bare | Case::WorkerCheck => (cell.committed, 0),
        Case::Replay => (connections as u64, connections as u64),
        _ => (cell.committed, cell.committed),
    };
    if (value as u64, records) != want {
        return Err(format!(
            "{case:?} on PostgreSQL: the schema shows value {value} and {records} records, \
             the sessions committed {want:?}"
        ));
    }
    Ok(cell)
}

fn setup(lab: &PgLab, case: Case, thread: usize) -> Result<Op, LabError> {
    let mut db = lab.connect()?;
    Ok(match case {
        Case::Bare => Box::new(move |_| {
            let mut tx = db.begin()?;
            tx.sql().execute(
                "UPDATE resources SET value = value + $1 WHERE name = $2",
                &[&1_i64, &RESOURCE],
            )?;
            tx.commit()
        }),
        Case::Floor => Box::new(move |i| {
            let mut tx = db.begin()?;
            let result: i64 = tx
                .sql()
                .query_one(
                    "UPDATE resources SET value = value + $1 WHERE name = $2 RETURNING value",
                    &[&1_i64, &RESOURCE],
                )?
                .get(0);
            tx.sql().execute(
                "INSERT INTO requests (resource, request_id, delta, result, generation)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &RESOURCE,
                    &format!("t{thread}-{i}"),
                    &1_i64,
                    &result,
                    &1_i64,
                ],
            )?;
            tx.commit()
        }),
        Case::Apply => Box::new(move |i| {
            match pg::apply(&mut db, RESOURCE, 1, &format!("t{thread}-{i}"), 1)? {
                Outcome::Applied { .. } => Ok(()),
                other => Err(unexpected(other)),
            }
        }),
        Case::Replay => {
            let id = format!("replayed-{thread}");
            pg::apply(&mut db, RESOURCE, 1, &id, 1)?;
            Box::new(move |_| match pg::apply(&mut db, RESOURCE, 1, &id, 1)? {
                Outcome::Replayed { .. } => Ok(()),
                other => Err(unexpected(other)),
            })
        }
        Case::WorkerCheck => Box::new(move |_| unfenced_write(&mut db, RESOURCE, 1, 1).map(drop)),
        Case::BareFloor | Case::BareApply | Case::BareApplyOneRead => {
            return Err(LabError::ServerUnavailable(
                "the bare-connection copies run on SQLite only".to_owned(),
            ));
        }
    })
}

fn unexpected(outcome: Outcome) -> LabError {
    LabError::Panicked {
        function: "benchmark",
        message: format!("unexpected outcome: {outcome}"),
    }
}
