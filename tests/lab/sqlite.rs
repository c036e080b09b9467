//! The shared claims on SQLite: a fresh file in the rollback-journal mode
//! for each test. (The journal modes themselves are L3.4's, in
//! `l3_transaction.rs`.)

use fencing_lab::claims::Track;
use rstest::fixture;

use crate::support::{Check, claim_on};

/// The destination of this module's tests.
pub type Lab = fencing_lab::Lab;

/// A fresh lab in its own temporary directory.
#[fixture]
pub fn lab() -> Lab {
    Lab::new(fencing_lab::Journal::Rollback).expect("the harness creates a lab")
}

/// The checks of claim `id` on SQLite.
pub fn claim(id: &str) -> Check {
    claim_on(Track::Sqlite, id)
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
