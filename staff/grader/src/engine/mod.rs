//! The engine both audiences share: how a submission's code is built, run
//! and judged, whoever asked.
//!
//! - `submission`: which folders are submissions, and reading their files.
//! - `scratch`: the scratch copy of the lab a build happens in; `cache`,
//!   the dependencies a class's scratch copies share, built once.
//! - `suite`: building the graded suite and running its test binary.
//! - `sandbox`: bubblewrap, around every build and test run; `accounts`,
//!   the pool of accounts it runs submissions as when started by root.
//! - `process`: a child process with a time limit and bounded output.
//! - `verdicts`: the channel the tests' verdicts come through; `libtest`,
//!   libtest's human output, for what a failed test printed.
//! - `reference_runs`: the reference's run of each step, drawn beside a
//!   failure's.
//! - `score`: verdicts to claims and points; `lesson_or_claim`, one part
//!   of the lab (`--lesson`, `--claim`) a run may be limited to.
//! - `review`: the review of a submission's source against
//!   `staff/grader/allowlist.txt`, which puts it on hold.
//! - `checkout`: where the lab's checkout is.

pub mod accounts;
pub mod cache;
pub mod checkout;
pub mod lesson_or_claim;
pub mod libtest;
pub mod process;
pub mod reference_runs;
pub mod review;
pub mod sandbox;
pub mod score;
pub mod scratch;
pub mod submission;
pub mod suite;
pub mod verdicts;
