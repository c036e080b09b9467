//! What a call of the learner's functions came to: the refusals they raise
//! (SQLSTATE `FC000` to `FC008`, numbers in `DETAIL`) turned back into the
//! lab's typed errors.
//!
//! [`REFUSALS`] is the one place a refusal is defined: the helper the
//! harness makes for it (its name, parameters and message), its SQLSTATE,
//! and the error it becomes on the way back.

use std::fmt::Write as _;

use postgres::error::DbError;

use crate::LabError;
use crate::claims::PG_CONTRACT;
use crate::pg::PgConnection;

/// The call a refusal answered: what its error needs besides the numbers.
struct Called<'a> {
    resource: &'a str,
    request_id: &'a str,
    delta: i64,
}

/// One refusal of the contract, as the learner's SQL raises it.
struct Refusal {
    /// The helper's name, `refuse_stale`.
    helper: &'static str,
    /// Its SQLSTATE, `FC001`.
    code: &'static str,
    /// Its parameters: a name and a type, `bigint` (into `DETAIL`, in
    /// order) or `text` (quoted in the message only).
    params: &'static [(&'static str, &'static str)],
    /// The message, with a `%` per parameter.
    message: &'static str,
    /// The lab's error for the numbers of its `DETAIL`; `None` when they do
    /// not fit.
    error: fn(&Called, &[i64]) -> Option<LabError>,
}

/// Every refusal, in SQLSTATE order.
const REFUSALS: &[Refusal] = &[
    Refusal {
        helper: "refuse_stale",
        code: "FC001",
        params: &[("presented", "bigint"), ("installed", "bigint")],
        message: "stale generation: presented %, installed %",
        error: |_, numbers| match *numbers {
            [presented, installed] => Some(LabError::Stale {
                presented,
                installed,
            }),
            _ => None,
        },
    },
    Refusal {
        helper: "refuse_never_issued",
        code: "FC002",
        params: &[("presented", "bigint"), ("installed", "bigint")],
        message: "generation never issued: presented %, installed %",
        error: |_, numbers| match *numbers {
            [presented, installed] => Some(LabError::NeverIssued {
                presented,
                installed,
            }),
            _ => None,
        },
    },
    Refusal {
        helper: "refuse_not_higher",
        code: "FC003",
        params: &[("requested", "bigint"), ("installed", "bigint")],
        message: "generation not higher: requested %, installed %",
        error: |_, numbers| match *numbers {
            [requested, installed] => Some(LabError::NotHigher {
                requested,
                installed,
            }),
            _ => None,
        },
    },
    Refusal {
        helper: "refuse_conflict",
        code: "FC004",
        params: &[("recorded_delta", "bigint"), ("presented_delta", "bigint")],
        message: "conflicting request: recorded with delta %, presented with delta %",
        // The presented delta is the call's own: a refusal naming another
        // is not this call's.
        error: |called, numbers| match *numbers {
            [recorded_delta, presented_delta] if presented_delta == called.delta => {
                Some(LabError::Conflict {
                    request_id: called.request_id.to_owned(),
                    recorded_delta,
                    presented_delta,
                })
            }
            _ => None,
        },
    },
    Refusal {
        helper: "refuse_unknown_resource",
        code: "FC005",
        params: &[("resource", "text")],
        message: "unknown resource %",
        error: |called, _| Some(LabError::UnknownResource(called.resource.to_owned())),
    },
    Refusal {
        helper: "refuse_empty_request_id",
        code: "FC006",
        params: &[],
        message: "empty request id",
        error: |_, _| Some(LabError::EmptyRequestId),
    },
    Refusal {
        helper: "refuse_generation_below_one",
        code: "FC007",
        params: &[("generation", "bigint")],
        message: "generation must be at least 1, got %",
        error: |_, numbers| match *numbers {
            [generation] => Some(LabError::GenerationBelowOne(generation)),
            _ => None,
        },
    },
    Refusal {
        helper: "refuse_overflow",
        code: "FC008",
        params: &[("value", "bigint"), ("delta", "bigint")],
        message: "value overflow: % + % does not fit in a bigint",
        error: |_, numbers| match *numbers {
            [value, delta] => Some(LabError::Overflow { value, delta }),
            _ => None,
        },
    },
];

/// The stubs' `todo!()`: `fencing_lab_todo(name)` raises it.
const TODO: &str = "FC000";

/// The helpers' SQL, made by the harness in every lab's schema: one
/// function per refusal that raises its SQLSTATE, with its numbers in
/// `DETAIL`, and `fencing_lab_todo`, the stubs' `todo!()`.
pub(super) fn helpers() -> String {
    let mut sql = format!(
        "
    CREATE FUNCTION fencing_lab_todo(function_name text) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% is not implemented yet: open {PG_CONTRACT}',
            function_name USING ERRCODE = '{TODO}';
    END $$;"
    );
    for refusal in REFUSALS {
        let params: Vec<String> = refusal
            .params
            .iter()
            .map(|(name, kind)| format!("{name} {kind}"))
            .collect();
        let shown: Vec<String> = refusal
            .params
            .iter()
            .map(|&(name, kind)| match kind {
                "text" => format!("quote_literal({name})"),
                _ => name.to_owned(),
            })
            .collect();
        let numbers: Vec<&str> = refusal
            .params
            .iter()
            .filter(|(_, kind)| *kind == "bigint")
            .map(|(name, _)| *name)
            .collect();
        let detail = match numbers[..] {
            [] => String::new(),
            [one] => format!(", DETAIL = {one}::text"),
            _ => format!(", DETAIL = {}", numbers.join(" || ' ' || ")),
        };
        let arguments: String = shown.iter().map(|shown| format!(", {shown}")).collect();
        let _ = write!(
            sql,
            "
    CREATE FUNCTION {}({}) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '{}'{arguments} USING ERRCODE = '{}'{detail};
    END $$;",
            refusal.helper,
            params.join(", "),
            refusal.message,
            refusal.code,
        );
    }
    sql.push('\n');
    sql
}

/// Waits until `db`'s server process has ended the statement that just
/// failed. An error reaches the client before the server has rolled the
/// statement's transaction back and let its row locks go; the next step of
/// a test, on another session, must not meet them.
pub(super) fn settled<T>(
    db: &mut PgConnection,
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
    if code == TODO {
        return LabError::NotImplemented {
            function,
            file: PG_CONTRACT,
        };
    }
    let Some(refusal) = REFUSALS.iter().find(|refusal| refusal.code == code) else {
        return error.into();
    };
    let called = Called {
        resource,
        request_id,
        delta,
    };
    (refusal.error)(&called, &numbers(db)).unwrap_or_else(|| bad_detail(function, db))
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
