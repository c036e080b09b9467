//! The PostgreSQL track (`--features postgres`): the shared claims again,
//! each test in a schema of its own on a private server that the first test
//! starts (or on the server `FENCING_LAB_PG_URL` names), and the claims only
//! a server shows: a lock per row (L3.1-L3.3, L3.7) and workers in separate
//! processes (L1.4).
//!
//! With no server to run on, every test here fails as NOT CHECKED and says
//! why: a track that did not run is never counted as passed.

use fencing_lab::claims::Track;
use fencing_lab::pg::PgLab;
use rstest::fixture;

use crate::support::{Check, claim_on, not_checked};

/// The destination of this module's tests.
pub type Lab = PgLab;

/// A fresh lab: its own schema, `fund-A` and `fund-B` at generation 1.
#[fixture]
pub fn lab() -> Lab {
    PgLab::new().unwrap_or_else(|error| not_checked("a lab on PostgreSQL", error))
}

/// The checks of claim `id` on PostgreSQL.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Postgres, id)
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

// What only the server shows, and its chapter of the transcript.
mod duplicates;
mod processes;
mod row_locks;
mod transcript;
