//! `cargo run`: the whole lab, lesson by lesson, against whichever
//! implementation is compiled in (`--features solutions` for the reference).

use std::process::ExitCode;

fn main() -> ExitCode {
    // An unfinished exercise panics with `todo!()`; the library turns that
    // into a line that names the file, so the default panic report would
    // only repeat it as noise.
    std::panic::set_hook(Box::new(|_| {}));

    println!("fencing-lab: running {}", fencing_lab::IMPLEMENTATION);
    println!();
    let (transcript, complete) = fencing_lab::story::run_all();
    print!("{}", transcript.render());
    println!();
    if complete {
        println!("Every lesson ran to its end. `cargo test` checks each claim.");
        ExitCode::SUCCESS
    } else {
        println!(
            "Some lessons stopped early (see \"stopped:\" above). `cargo test` shows which claims fail."
        );
        ExitCode::FAILURE
    }
}
