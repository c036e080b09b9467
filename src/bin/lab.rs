//! `cargo run`: the whole lab, lesson by lesson, against whichever
//! implementation is compiled in (`--features solutions` for the reference).

fn main() {
    // The etcd chapter's workers are this program, started again.
    #[cfg(feature = "etcd")]
    fencing_lab::etcd::serve_if_worker();

    // An unfinished exercise panics with `todo!()`; the library turns that
    // into a line that names the file, so the default panic report would
    // only repeat it as noise.
    std::panic::set_hook(Box::new(|_| {}));

    println!("fencing-lab: running {}", fencing_lab::IMPLEMENTATION);
    println!();
    let (transcript, complete) = fencing_lab::story::run_all();
    print!("{}", transcript.render());
    println!();
    // A lesson that stopped at an unfinished exercise is part of the story,
    // not a failure of this program, so the exit status stays 0; the last
    // line says which it was.
    if complete {
        println!("Every lesson ran to its end. `cargo test` checks each claim.");
    } else {
        println!(
            "Some lessons stopped early (see \"stopped:\" above). `cargo test` shows which claims fail."
        );
    }
}
