//! Exercise 2 of 2: the destination applies a worker's request, or refuses
//! it.
//!
//! Run `cargo test` to see which claims still fail; `cargo run` prints the
//! lab's story against your code. Tools you have (see `api/src/sqlite.rs`):
//! `db.begin(TransactionBehavior::…)` returns a `Tx` with
//! `installed_generation`, `find_record`, `value`, `set_value`,
//! `insert_record` and `commit`. Dropping a `Tx` without committing rolls it
//! back.

#[allow(unused_imports)] // you will need these
use crate::TransactionBehavior;

#[allow(unused_imports)]
use crate::Record;
use crate::{Destination, LabError, Outcome};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`. Returns `Outcome::Applied` with the new value, or
/// `Outcome::Replayed` with the result the first apply returned.
///
/// Claims: L1 (stale authority), L2 (the contract), L3 (the transaction),
/// L4 (duplicates), L5.1 (rollback), L6.1 (bad input).
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    // TODO: refuse malformed input before touching the database: an empty
    // request id, a generation below 1. Which `LabError` variants say so?
    // (An id longer than `MAX_REQUEST_ID_BYTES` the table refuses itself,
    // as `RequestIdTooLong`: pass the id on as it came.)
    //
    // TODO: which transaction behavior? Nothing may change the installed
    // generation between the moment you read it and the moment you write.
    //
    // TODO: compare the presented generation with the installed one. Which
    // comparison accepts exactly the current holder? A lower number and a
    // higher number are different mistakes: `Stale` and `NeverIssued`.
    //
    // TODO: has this request been applied before? What is the record's key?
    // Same delta: what do you return, and what do you change? Different
    // delta: `Conflict`. Should this come before or after the generation?
    //
    // TODO: compute the new value without overflowing (`Overflow`), write
    // it, record the request (which result belongs in the record?), and
    // commit. Must the record share the transaction with the value?
    //
    // What each test expects: `cargo grade --claims` lists the claims'
    // statements. A failing step asks you a question about what it saw;
    // `cargo grade --hint L4.9` (with the claim's id) tells you more.
    let _ = (db, resource, generation, request_id, delta);
    todo!("apply: decide the transaction, the comparison, the order and the record")
}
