//! The SQL functions' track (`--features postgres-sql`): the contract as two
//! PL/pgSQL functions (`exercises/postgres/contract.sql`) on the PostgreSQL
//! server, called by roles that may do only their part. The shared claims
//! run again, through a thin adapter that calls the functions
//! (`src/pg/contract.rs`); lesson L8 shows what the roles and a rule of the
//! schema close, and what stays open.
//!
//! Left out here: the claims whose tests pause right after a read (L3.1 to
//! L3.3; a read inside a function reaches no checkpoint), and L5.4, the
//! restore that L8.3 refuses.

use fencing_lab::LabError;
use fencing_lab::claims::Track;
use fencing_lab::pg::contract::SqlLab;
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
    crate::support::quiet_todo_panics();
    SqlLab::new().unwrap_or_else(|error| match error {
        LabError::ContractRejected(_) => {
            panic!("\n{error}\n  open:     exercises/postgres/contract.sql\n")
        }
        error => not_checked("a lab with the SQL contract", error),
    })
}

/// The checks of claim `id` on the SQL functions' track.
pub fn claim(id: &str) -> Check {
    claim_on(Track::PostgresSql, id)
}

#[path = "l1_stale.rs"]
mod l1_stale;
#[path = "l2_contract.rs"]
mod l2_contract;
#[path = "l4_duplicates.rs"]
mod l4_duplicates;
#[path = "l5_counterexamples.rs"]
mod l5_counterexamples;
#[path = "l6_bad_input.rs"]
mod l6_bad_input;
// L4.10 pauses at the write checkpoints only, which fire inside a function.
// Named for its lesson, so that libtest lists it in the lesson's order.
#[path = "postgres/duplicates.rs"]
mod l4_duplicates_at_once;

mod l8;
mod transcript;
