//! A lesson's line on the watch screen, its bar and its counts:
//!
//! ```text
//!   L2   ############........   4/7  points, 4/7 claims  An explicit contract per resource
//! ```
//!
//! The watch mode draws it, and so does `cargo book` for the book's sample
//! screens (it includes this file), so that the two cannot draw it apart.

use std::fmt::Write as _;

use lab_claims::Lesson;

/// The width of a lesson's bar.
const WIDTH: usize = 20;

/// Writes `lesson`'s line to `out`: `earned` of `total` points, `passing`
/// of `claims` claims.
pub fn lesson_line(
    out: &mut String,
    lesson: &Lesson,
    (earned, total): (u32, u32),
    (passing, claims): (usize, usize),
) {
    let filled = if total == 0 {
        0
    } else {
        (earned as usize * WIDTH).div_ceil(total as usize)
    };
    let _ = writeln!(
        out,
        "  {:<4} {}{}  {earned:>2}/{total:<2} points, {passing}/{claims} claims  {}",
        lesson.id,
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        lesson.title
    );
}
