//! The graded suite: one test binary, one module per lesson, in the lesson's
//! order. A test `lX_Y_…` proves claim LX.Y of `src/claims.rs`; its failure
//! names the claim, the step, what was expected and the file to open.
//!
//! Run against your exercises with `cargo test`, against the reference with
//! `cargo test --features solutions`. Add `--features postgres` for the
//! PostgreSQL track.

// The shared claim files are compiled once per destination, on purpose.
#![allow(clippy::duplicate_mod)]

mod support;
// The grader's verdict channel; silent under `cargo test`.
mod verdict;

// The claims that hold on any destination: one set of tests, compiled once
// per destination. Inside each module, `Lab` is that destination's lab and
// `claim` checks that destination's track.
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

// The etcd track: workers in processes of their own, a lock from a real
// cluster (lesson L7).
#[cfg(feature = "etcd")]
mod etcd;

// The claims only SQLite's lab shows: every interleaving explored, the
// model, the journal modes, the load test and the transcripts.
mod l1_interleavings;
mod l2_model;
mod l3_load;
mod l3_transaction;
mod l4_on_sqlite;
mod transcripts;

// The explorer's enumerator, checked on its own (plain functions that the
// explorer's claims call first).
mod enumerator;

// Beyond one process: a child process killed mid-apply (L5.6), and the real
// sqlite3 shell as another writer and as the direct path (L3.5, L5.7).
mod crash;
mod external_clients;
