//! `cargo run`: the whole lab, lesson by lesson, against whichever
//! implementation is compiled in (`--features solutions` for the reference).

use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // The etcd chapter's workers are this program, started again.
    #[cfg(feature = "etcd")]
    fencing_lab::etcd::serve_if_worker();

    // An unfinished exercise's `todo!()` is a line of the transcript, not a
    // panic report; every other panic is reported.
    fencing_lab::quiet_todo_panics();

    match tell() {
        Ok(()) => ExitCode::SUCCESS,
        // A full disk or a closed pipe: say so, rather than panic.
        Err(error) => {
            eprintln!("lab: cannot print the transcript: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the lab and prints each lesson as soon as it ends (the etcd chapter
/// takes seconds of its own), with a blank line between lessons.
fn tell() -> io::Result<()> {
    let mut out = io::stdout();
    writeln!(
        out,
        "fencing-lab: running {}\n",
        fencing_lab::IMPLEMENTATION
    )?;
    let mut printed = Ok(());
    let mut first = true;
    let complete = fencing_lab::story::run_all(|lesson| {
        if printed.is_ok() {
            let separator = if std::mem::take(&mut first) { "" } else { "\n" };
            printed = write!(out, "{separator}{}", lesson.render());
        }
    });
    printed?;
    writeln!(out)?;
    // A lesson that stopped at an unfinished exercise is part of the story,
    // not a failure of this program, so the exit status stays 0; the last
    // line says which it was.
    if complete {
        writeln!(
            out,
            "Every lesson ran to its end. `cargo test` checks each claim."
        )
    } else {
        writeln!(
            out,
            "Some lessons stopped early (see \"stopped:\" above). `cargo test` shows which claims fail."
        )
    }
}
