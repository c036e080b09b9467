//! `cargo grade`: see the library's documentation (`src/lib.rs`) and
//! `cargo grade --help`.

fn main() -> std::process::ExitCode {
    grader::run()
}
