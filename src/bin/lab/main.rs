//! `cargo run`: the whole lab, lesson by lesson, against whichever
//! implementation is compiled in (`--features solutions` for the reference).
//! It exits with status 0 only when every lesson ran to its end; a lesson
//! that stopped early (an unfinished exercise, a panic, or an answer its
//! claim does not expect) says why and which file to open, and the status
//! is 1.

mod runs;

use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // The harness calls your functions (or the reference's) through the
    // table this program hands it; it never links them itself.
    fencing_lab::wire(fencing_lab_exercises::IMPLEMENTATION);

    // The etcd chapter's workers are this program, started again.
    #[cfg(feature = "etcd")]
    fencing_lab::etcd::serve_if_worker();

    // A panic in an exercise (its `todo!()` too) is a line of the
    // transcript, not a panic report; every other panic is reported.
    fencing_lab::quiet_learner_panics();

    // `--runs`: the key scenes' runs, a line each, for `cargo book`.
    if std::env::args().nth(1).as_deref() == Some("--runs") {
        return match runs::runs() {
            Ok(runs) => {
                for (claim, shows, line) in runs {
                    println!("{claim}\t{shows}\t{line}");
                }
                ExitCode::SUCCESS
            }
            Err(halt) => {
                eprintln!("lab: a scene did not run to its end: {halt}");
                ExitCode::FAILURE
            }
        };
    }

    match tell() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        // A full disk or a closed pipe: say so, rather than panic.
        Err(error) => {
            eprintln!("lab: cannot print the transcript: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the lab and prints each lesson as soon as it ends (the etcd chapter
/// takes seconds of its own), with a blank line between lessons. Returns
/// whether every lesson ran to its end.
fn tell() -> io::Result<bool> {
    let mut out = io::stdout();
    writeln!(
        out,
        "fencing-lab: running {}\n",
        fencing_lab::implementation().name
    )?;
    let mut printed = Ok(());
    let mut first = true;
    // The chapters that stopped early, by the id on their first line.
    let mut stopped: Vec<String> = Vec::new();
    let complete = fencing_lab::story::run_all(|lesson| {
        let text = lesson.render();
        if text.contains("\n  stopped: ") {
            stopped.extend(text.split_whitespace().next().map(str::to_owned));
        }
        if printed.is_ok() {
            let separator = if std::mem::take(&mut first) { "" } else { "\n" };
            printed = write!(out, "{separator}{}", lesson.render());
        }
    });
    printed?;
    writeln!(out)?;
    if complete {
        writeln!(
            out,
            "Every lesson ran to its end. `cargo test`, with the same features, checks each claim."
        )?;
    } else {
        // Each chapter's tests are compiled with its track's feature only.
        let mut commands: Vec<&str> = Vec::new();
        for id in &stopped {
            let command = fencing_lab::story::tests_of(id);
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
        writeln!(
            out,
            "Some lessons stopped early ({}): each \"stopped:\" line above says why and which file to open. Which claims fail: {}.",
            stopped.join(", "),
            commands.join(", ")
        )?;
    }
    Ok(complete)
}
