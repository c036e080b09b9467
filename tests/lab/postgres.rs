//! The PostgreSQL track (`--features postgres`): the shared claims again,
//! each test in a schema of its own on a private server that the first test
//! starts (or on the server `FENCING_LAB_PG_URL` names), and the claims only
//! a server shows: a lock per row (L3.1-L3.3, L3.7) and workers in separate
//! processes (L1.4).
//!
//! With no server to run on, every test here fails as NOT CHECKED and says
//! why: a track that did not run is never counted as passed.

use fencing_lab::claims::Track;
use fencing_lab::describe_error;
use fencing_lab::pg::PgLab;
use rstest::fixture;

use crate::support::{Check, claim_on, not_checked};

/// The destination of this module's tests.
pub type Lab = PgLab;

/// A fresh lab: its own schema, `fund-A` and `fund-B` at generation 1.
#[fixture]
pub fn lab() -> Lab {
    PgLab::new().unwrap_or_else(|error| {
        // The test's body, which binds its claim, never runs: this guard
        // reports the failure to the grader as the test's own.
        let _verdict = crate::verdict::guard();
        not_checked("a lab on PostgreSQL", describe_error(&error))
    })
}

/// L2.7's lab: a fresh one, as every test's, restarted for every case.
pub fn model_lab() -> Lab {
    lab()
}

/// Under the grader, starts the process's server on a thread of its own as
/// soon as the verdict channel opens: `postgres::` sorts last, so the
/// server's start (an `initdb`, about a second) overlaps the SQLite tests
/// instead of following them. Only when the run includes PostgreSQL tests
/// (the grader names the tests of each run; no name runs them all): those
/// wait for the start, so the process cannot end in the middle of it and
/// leave the server's folder behind. Under `cargo test` nothing changes.
pub fn start_server_early() {
    if crate::support::run_includes("postgres::") {
        std::thread::spawn(|| {
            // The result is kept; the first test to need it reports it.
            let _ = fencing_lab::pg::server::shared();
        });
    }
}

/// The checks of claim `id` on PostgreSQL.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Postgres, id)
}

#[path = "l1_stale.rs"]
mod l1_stale;
#[path = "l2_contract.rs"]
mod l2_contract;
#[path = "l2_model.rs"]
mod l2_model;
#[path = "l3_between_transactions.rs"]
mod l3_between_transactions;
#[path = "l3_two_requests.rs"]
mod l3_two_requests;
#[path = "l4_duplicates.rs"]
mod l4_duplicates;
#[path = "l5_counterexamples.rs"]
mod l5_counterexamples;
#[path = "l5_restore.rs"]
mod l5_restore;
#[path = "l6_bad_input.rs"]
mod l6_bad_input;

// What only the server shows, and its chapter of the transcript.
mod duplicates;
mod processes;
mod row_locks;
mod transcript;
