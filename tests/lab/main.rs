//! The graded suite: one test binary, one module per lesson, in the lesson's
//! order. A test `lX_Y_…` proves claim LX.Y of `src/claims.rs`; its failure
//! names the claim, the step, what was expected and the file to open.
//!
//! Run against your exercises with `cargo test`, against the reference with
//! `cargo test --features solutions`.

mod support;

mod l1_stale;
mod l2_contract;
mod l2_model;
mod l3_load;
mod l3_transaction;
mod l4_duplicates;
mod l5_counterexamples;
mod l6_bad_input;
mod transcripts;

// Beyond one process: a child process killed mid-apply (L5.6), and the real
// sqlite3 shell as another writer and as the direct path (L3.5, L5.7).
mod crash;
mod external_clients;
