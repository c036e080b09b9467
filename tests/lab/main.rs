//! The graded suite: one test binary, one module per lesson, in the lesson's
//! order. A test `lX_Y_…` proves claim LX.Y of `staff/claims/src/lib.rs`; its failure
//! names the claim, the step, what was expected and the file to open.
//!
//! Run against your exercises with `cargo test`, against the reference with
//! `cargo test --features solutions`. Add `--features postgres` for the
//! PostgreSQL track.

// The shared claim files are compiled once per destination, on purpose.
#![allow(clippy::duplicate_mod)]

// Every passed step's run, when asked for (the reference's, for the report).
mod reference_runs;
mod support;
// The grader's verdict channel; silent under `cargo test`.
mod verdict;

// The module names start with their lesson, so that libtest lists the tests,
// and their failures, in the lesson's order: L1 before L2 ... before L7.
//
// The claims that hold on any destination are one set of files, compiled
// here for SQLite and again under `postgres::` for the PostgreSQL track.
// Inside each, `Lab` is that destination's lab, `lab` makes one and `claim`
// checks that destination's track: for SQLite, the ones below. L2.7's model
// takes its lab from `model_lab`.
use support::{claim, lab};
/// The destination of the SQLite track's shared claim files.
type Lab = fencing_lab::Lab;

/// L2.7's lab on SQLite: one file in WAL mode, where the model has always
/// run, restarted for every case.
fn model_lab() -> Lab {
    support::wire();
    Lab::new(fencing_lab::Journal::Wal).expect("the harness creates a lab")
}

mod l1_interleavings;
mod l1_stale;
mod l2_contract;
mod l2_model;
mod l3_between_transactions;
mod l3_load;
mod l3_sqlite3_shell;
mod l3_transaction;
mod l3_two_requests;
mod l4_duplicates;
mod l4_on_sqlite;
mod l5_counterexamples;
// L5.6: a child process killed mid-apply.
mod l5_crash;
mod l5_restore;
mod l5_sqlite3_shell;
mod l6_bad_input;

// The etcd track: workers in processes of their own, a lock from a real
// cluster (lesson L7).
#[cfg(feature = "etcd")]
mod l7_etcd;

// The PostgreSQL track: the shared claim files again, and what only a
// server shows.
#[cfg(feature = "postgres")]
mod postgres;
// Lesson 8: the contract as SQL functions on the server, and roles.
#[cfg(feature = "postgres-sql")]
mod postgres_sql;

// The real sqlite3 shell, the external client of L3.5 and L5.7.
mod sqlite3_shell;

// The transcripts, each lesson's story against the reference's.
mod transcripts;

// The explorer's enumerator, checked on its own (plain functions that the
// explorer's claims call first).
mod enumerator;
