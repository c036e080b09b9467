//! What a call of the learner's functions came to: the refusals they raise
//! (SQLSTATE `FC000` to `FC008`, numbers in `DETAIL`) turned back into the
//! lab's typed errors.

use postgres::error::DbError;

use crate::LabError;
use crate::claims::PG_CONTRACT;
use crate::pg::PgDestination;

/// Waits until `db`'s server process has ended the statement that just
/// failed. An error reaches the client before the server has rolled the
/// statement's transaction back and let its row locks go; the next step of
/// a test, on another session, must not meet them.
pub(super) fn settled<T>(
    db: &mut PgDestination,
    result: Result<T, LabError>,
) -> Result<T, LabError> {
    if result.is_err() {
        let _ = db.client().simple_query("");
    }
    result
}

/// What a call's error means: a refusal the function raised (SQLSTATE
/// `FC001`..`FC008`, numbers in `DETAIL`), the stub's `FC000`, or whatever
/// else the PostgreSQL track makes of it.
pub(super) fn refusal(
    error: postgres::Error,
    function: &'static str,
    resource: &str,
    request_id: &str,
    delta: i64,
) -> LabError {
    let Some(db) = error.as_db_error() else {
        return error.into();
    };
    let code = db.code().code();
    let numbers = || numbers(db);
    let two = |make: fn(i64, i64) -> LabError| match numbers()[..] {
        [a, b] => make(a, b),
        _ => bad_detail(function, db),
    };
    match code {
        "FC000" => LabError::NotImplemented {
            function,
            file: PG_CONTRACT,
        },
        "FC001" => two(|presented, installed| LabError::Stale {
            presented,
            installed,
        }),
        "FC002" => two(|presented, installed| LabError::NeverIssued {
            presented,
            installed,
        }),
        "FC003" => two(|requested, installed| LabError::NotHigher {
            requested,
            installed,
        }),
        "FC004" => match numbers()[..] {
            [recorded_delta, presented_delta] if presented_delta == delta => LabError::Conflict {
                request_id: request_id.to_owned(),
                recorded_delta,
                presented_delta,
            },
            _ => bad_detail(function, db),
        },
        "FC005" => LabError::UnknownResource(resource.to_owned()),
        "FC006" => LabError::EmptyRequestId,
        "FC007" => match numbers()[..] {
            [generation] => LabError::GenerationBelowOne(generation),
            _ => bad_detail(function, db),
        },
        "FC008" => two(|value, delta| LabError::Overflow { value, delta }),
        _ => error.into(),
    }
}

/// The numbers of a refusal's `DETAIL`, in order.
fn numbers(db: &DbError) -> Vec<i64> {
    db.detail()
        .unwrap_or_default()
        .split_whitespace()
        .map_while(|word| word.parse().ok())
        .collect()
}

fn bad_detail(function: &'static str, db: &DbError) -> LabError {
    LabError::Panicked {
        function,
        message: format!(
            "raised SQLSTATE {} with DETAIL {:?}: raise it with the refuse_… function of that \
             refusal, which puts the numbers in DETAIL",
            db.code().code(),
            db.detail().unwrap_or_default()
        ),
    }
}
