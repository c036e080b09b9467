//! The SQL functions' track (`--features postgres-sql`): the contract as two
//! PL/pgSQL functions (`exercises/postgres/contract.sql`) on the PostgreSQL
//! server, called by roles that may do only their part. The shared claims
//! run again, through a thin adapter that calls the functions
//! (`src/pg/contract.rs`); lesson L8 shows what the roles and a rule of the
//! schema close, and what stays open.
//!
//! The row-lock claims (L3.1 to L3.3, L3.7) run the PostgreSQL track's file,
//! and two requests at once (L3.8) the shared one: inside a function a read
//! reaches its checkpoint through a row security policy, before the read
//! statement takes its lock (see `src/pg/contract.rs`). Left out: L3.2 and
//! L3.3 between two transactions (a call here is one statement, one
//! transaction), and L5.4, the restore that L8.3 refuses.

use fencing_lab::claims::Track;
use fencing_lab::pg::contract::SqlLab;
use fencing_lab::{LabError, describe_error};
use rstest::fixture;

use crate::support::{Check, claim_on, not_checked};

/// The destination of this module's tests.
pub type Lab = SqlLab;

/// A fresh lab with the contract loaded: its own schema, `fund-A` and
/// `fund-B` at generation 1.
///
/// A file that does not load fails every test of the track with what went
/// wrong: the learner's to fix, unlike a missing server (NOT CHECKED).
#[fixture]
pub fn lab() -> Lab {
    crate::support::quiet_learner_panics();
    SqlLab::new().unwrap_or_else(|error| {
        // The test's body, which binds its claim, never runs: this guard
        // reports the failure to the grader as the test's own.
        let _verdict = crate::verdict::guard();
        match error {
            LabError::ContractRejected(_) => {
                panic!("\n{error}\n  open:     exercises/postgres/contract.sql\n")
            }
            error => not_checked("a lab with the SQL contract", describe_error(&error)),
        }
    })
}

/// L2.7's lab: a fresh one, as every test's, restarted for every case.
pub fn model_lab() -> Lab {
    lab()
}

/// The checks of claim `id` on the SQL functions' track.
pub fn claim(id: &str) -> Check {
    claim_on(Track::PostgresSql, id)
}

#[path = "l1_stale.rs"]
mod l1_stale;
#[path = "l2_contract.rs"]
mod l2_contract;
#[path = "l2_model.rs"]
mod l2_model;
#[path = "l3_two_requests.rs"]
mod l3_two_requests;
#[path = "l4_duplicates.rs"]
mod l4_duplicates;
#[path = "l5_counterexamples.rs"]
mod l5_counterexamples;
#[path = "l6_bad_input.rs"]
mod l6_bad_input;
// L4.10 pauses at every checkpoint the functions reach: the writes' triggers
// and the reads' row security policies. Named for its lesson, so that
// libtest lists it in the lesson's order.
#[path = "postgres/duplicates.rs"]
mod l4_duplicates_at_once;
// The PostgreSQL track's row-lock tests, on the functions' reads and
// writes; named for their lesson, like the module above.
#[path = "postgres/row_locks.rs"]
mod l3_row_locks;

mod l8;
mod transcript;
