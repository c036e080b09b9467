//! Grading for instructors: a class, its outputs, and the platforms a
//! course runs on.
//!
//! - `class`: batch grading, one submission after the other; `fill`,
//!   `--fill`, a gradebook given the columns of claims added since.
//! - `output`: the output folder: its place, its lock, its files, merging.
//! - `report`: gradebook, results.json, summary, class rules, `--expect`.
//! - `html`: `index.html`, the class report, and each failure's run drawn.
//! - `classroom`: `--classroom`, the GitHub Classroom workflow.
//! - `gradescope`: `--gradescope`, the scorecard in Gradescope's format.

pub mod class;
pub mod classroom;
pub mod fill;
pub mod gradescope;
pub mod html;
pub mod output;
pub mod report;
