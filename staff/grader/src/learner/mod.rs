//! The learner's commands, on their own checkout.
//!
//! - `scorecard`: no arguments, this checkout's scorecard, and the
//!   learner's report (the class report's pages for a class of one).
//! - `watch`: `--watch`, the scorecard again on every save, and its keys;
//!   `watch::extras`, its views of a lesson at full marks and of a reset;
//!   `terminal`, the size it draws to; `bar`, a lesson's line on its
//!   screen (which `cargo book` includes too).
//! - `hint`: `--hint`, the next level of a failing step's hint, and
//!   `--claims`, every claim's statement.
//! - `explain`: `--explain`, a lesson at full marks: the reference's lines
//!   (`reference`) beside the learner's, and its pitfalls (`pitfalls`).
//! - `reset`: `--reset`, an exercise file back to its stub.

pub mod bar;
pub mod explain;
pub mod hint;
pub mod pitfalls;
pub mod reference;
pub mod reset;
pub mod scorecard;
pub mod terminal;
pub mod watch;
