//! The paths on PostgreSQL (feature `postgres`): (a) to (e) through lab
//! sessions (`PgConnection`) on the lab's private server, or the one named
//! by `FENCING_LAB_PG_URL`, and (f) through lesson 8's SQL functions
//! (`SqlSession`, logged in as the worker's role).

use fencing_lab::Session;
use fencing_lab::pg::contract::SqlLab;
use fencing_lab::pg::{self, PgLab};
use fencing_lab::{LabError, Outcome};
use postgres::error::SqlState;

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
    let describe = |error| fencing_lab::describe_error(&error);
    let (lab, cell) = if case == Case::SqlFunction {
        let lab = SqlLab::new().map_err(describe)?;
        let cell = run(connections, timing, |thread| {
            sql_function(&lab, thread).map(cancel_is_contention)
        })?;
        (lab.pg().clone(), cell)
    } else {
        let lab = PgLab::new().map_err(describe)?;
        let cell = run(connections, timing, |thread| setup(&lab, case, thread))?;
        (lab, cell)
    };
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

/// A lab session's operation, with one more error counted as contention.
fn setup(lab: &PgLab, case: Case, thread: usize) -> Result<Op, LabError> {
    Ok(cancel_is_contention(paths(lab, case, thread)?))
}

/// `op`, with one more error counted as contention.
fn cancel_is_contention(mut op: Op) -> Op {
    Box::new(move |i| match op(i) {
        // Seen at 8 sessions with the lab's 1 ms lock timeout: the server
        // now and then reports a lock wait's cancellation as SQLSTATE 57014
        // ("canceling statement due to user request") instead of 55P03.
        // Nothing here sends a cancel request, so it is counted as
        // contention and retried.
        Err(LabError::Postgres(error)) if error.code() == Some(&SqlState::QUERY_CANCELED) => {
            Err(LabError::Contention)
        }
        other => other,
    })
}

/// (f): the worker's session calls the `apply` function, a new request
/// each time.
fn sql_function(lab: &SqlLab, thread: usize) -> Result<Op, LabError> {
    let mut worker = lab.connect()?;
    Ok(Box::new(move |i| {
        match worker.apply(RESOURCE, 1, &format!("t{thread}-{i}"), 1)? {
            Outcome::Applied { .. } => Ok(()),
            other => Err(unexpected(other)),
        }
    }))
}

fn paths(lab: &PgLab, case: Case, thread: usize) -> Result<Op, LabError> {
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
        Case::WorkerCheck => Box::new(move |_| db.unfenced_write(RESOURCE, 1, 1).map(drop)),
        Case::SqlFunction => unreachable!("(f) is measured by `sql_function`"),
        Case::BareFloor | Case::BareApply | Case::BareApplyOneRead => {
            drop(db);
            let mut bare = Bare::connect(lab)?;
            Box::new(move |i| bare.run(case, &format!("t{thread}-{i}")))
        }
    })
}

/// A bare session on the lab's schema with the lab's lock timeout, whose
/// statements are prepared once, as a service would prepare them. The lab's
/// sessions send each statement's text every time: two round trips per
/// statement instead of one.
struct Bare {
    client: postgres::Client,
    update_returning: postgres::Statement,
    insert: postgres::Statement,
    lock: postgres::Statement,
    read: postgres::Statement,
    find: postgres::Statement,
    set_value: postgres::Statement,
    lock_and_read: postgres::Statement,
}

impl Bare {
    fn connect(lab: &PgLab) -> Result<Bare, LabError> {
        let address = lab.address();
        let (schema, conninfo) = address.split_once(' ').ok_or_else(|| {
            LabError::ServerUnavailable(format!("malformed lab address {address:?}"))
        })?;
        let mut config: postgres::Config = conninfo
            .parse()
            .map_err(|error| LabError::ServerUnavailable(format!("{error}")))?;
        config.options(&format!("-c lock_timeout=1ms -c search_path={schema}"));
        let mut client = config.connect(postgres::NoTls)?;
        Ok(Bare {
            update_returning: client.prepare(
                "UPDATE resources SET value = value + $1 WHERE name = $2 RETURNING value",
            )?,
            insert: client.prepare(
                "INSERT INTO requests (resource, request_id, delta, result, generation)
                 VALUES ($1, $2, $3, $4, $5)",
            )?,
            lock: client.prepare("SELECT 1 FROM resources WHERE name = $1 FOR UPDATE NOWAIT")?,
            read: client.prepare("SELECT generation, value FROM resources WHERE name = $1")?,
            find: client.prepare(
                "SELECT resource, request_id, delta, result, generation FROM requests
                 WHERE resource = $1 AND request_id = $2",
            )?,
            set_value: client.prepare("UPDATE resources SET value = $1 WHERE name = $2")?,
            lock_and_read: client.prepare(
                "SELECT generation, value FROM resources WHERE name = $1 FOR UPDATE NOWAIT",
            )?,
            client,
        })
    }

    /// (b), or the reference's statements (with `BareApplyOneRead`: the
    /// row locked and read by one statement), for generation 1, delta 1.
    fn run(&mut self, case: Case, request_id: &str) -> Result<(), LabError> {
        let mut tx = self.client.transaction()?;
        let result: i64 = if case == Case::BareFloor {
            tx.query_one(&self.update_returning, &[&1_i64, &RESOURCE])?
                .get(0)
        } else {
            let (generation, mut value): (i64, i64) = if case == Case::BareApplyOneRead {
                let row = tx.query_one(&self.lock_and_read, &[&RESOURCE])?;
                (row.get(0), row.get(1))
            } else {
                tx.query_one(&self.lock, &[&RESOURCE])?;
                let row = tx.query_one(&self.read, &[&RESOURCE])?;
                (row.get(0), row.get(1))
            };
            if generation != 1 {
                return Err(LabError::Stale {
                    presented: 1,
                    installed: generation,
                });
            }
            if tx
                .query_opt(&self.find, &[&RESOURCE, &request_id])?
                .is_some()
            {
                return Ok(());
            }
            if case == Case::BareApply {
                value = tx.query_one(&self.read, &[&RESOURCE])?.get(1);
            }
            let result = value + 1;
            tx.execute(&self.set_value, &[&result, &RESOURCE])?;
            result
        };
        tx.execute(
            &self.insert,
            &[&RESOURCE, &request_id, &1_i64, &result, &1_i64],
        )?;
        Ok(tx.commit()?)
    }
}

fn unexpected(outcome: Outcome) -> LabError {
    LabError::Panicked {
        function: "benchmark",
        message: format!("unexpected outcome: {outcome}"),
    }
}
