//! `cargo xtask`: the maintainers' checks that are programs.
//!
//! - `circles [SRC...]`: no import circles between the modules of a crate
//!   (`circles.rs`).
//! - `premises DIR...`: every hint a graded run showed holds its premise
//!   on its step (`premises.rs`).

mod circles;
mod premises;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask circles [SRC...] | premises DIR...";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("circles") => circles::run(&args[1..]),
        Some("premises") => premises::run(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("xtask: {USAGE}");
            ExitCode::from(2)
        }
    }
}
