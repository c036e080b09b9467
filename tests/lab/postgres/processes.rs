//! L1.4: workers in separate processes, over TCP. Each role is a process of
//! its own (this test binary, started again with `--exact` on the test's own
//! name and the role in the environment) that connects to the server through
//! the loopback interface. The parent drives them by their stdin and stdout:
//! a worker says what it did and waits for a line before going on, so the
//! order is the parent's choice every time, with no sleep.

use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use fencing_lab::pg::{LAB_VARIABLE, PgLab};
use fencing_lab::{Checkpoint, Session, describe, describe_error};

use super::{claim, lab};
use crate::support::*;

/// The environment variable that makes the test a child: its role.
const ROLE: &str = "FENCING_LAB_PG_ROLE";
/// Every line a child says to its parent starts with this.
const SAYS: &str = "fencing-lab-role: ";
/// How a child says that its call took a route the checkpoints do not see
/// (what follows is why), as `Check::while_paused` would in one process.
const UNOBSERVED: &str = "unobserved: ";

/// Worker 1 checks that it holds generation 1, waits, and applies with it
/// after the authority's process installed 2 and worker 2's process applied
/// under 2. The destination rejects worker 1 as stale.
#[test]
fn l1_4_stale_worker_process_is_rejected_after_the_authority_process_installs() {
    if let Ok(role) = std::env::var(ROLE) {
        child(&role);
    }
    let c = claim("L1.4");
    let lab = lab();

    // Worker 1 reads the installed generation, as its own check, and waits.
    let mut worker_1 = Role::start(&c, &lab, "check-then-apply");
    c.same(
        "worker 1's process",
        "checked: generation 1",
        worker_1.hears(&c),
    );

    // Meanwhile the authority's process installs 2 ...
    c.same(
        "the authority's process: install_generation(fund-A, 2)",
        INSTALLED,
        Role::start(&c, &lab, "install-2").finish(&c),
    );
    // ... and worker 2's process, holding 2, applies.
    c.same(
        "worker 2's process: apply(fund-A, generation 2, \"w2\", +3)",
        applied(3),
        Role::start(&c, &lab, "apply-under-2").finish(&c),
    );

    // Worker 1 comes back with the generation it checked.
    worker_1.go(&c);
    c.same(
        "worker 1's process: apply(fund-A, generation 1, \"w1\", +5)",
        stale(1, 2),
        worker_1.finish(&c),
    );
    c.state(&lab, A, 2, 3);
    c.records(&lab, A, &[rec(A, "w2", 3, 3, 2)]);
}

/// Worker 1's process pauses inside apply, right after it read the
/// generation: the authority's process must not install between that check
/// and worker 1's effect, so it is held off by contention. When worker 1
/// commits, the install lands, and worker 1's next request is stale. (If
/// the install lands during the pause, because the pause fell in a check
/// made before the decisive one, worker 1 must end stale instead.)
#[test]
fn l1_4_worker_process_paused_inside_apply_holds_off_the_authority_process() {
    if let Ok(role) = std::env::var(ROLE) {
        child(&role);
    }
    let c = claim("L1.4");
    let lab = lab();

    let mut worker_1 = Role::start(&c, &lab, "pause-inside-apply");
    let step = "worker 1's process: apply(fund-A, generation 1, \"w1\", +5)";
    let paused = format!("paused {}", Checkpoint::GenerationRead);
    let heard = worker_1.hears(&c);
    if let Some(why) = heard.strip_prefix(UNOBSERVED) {
        c.fail_unobserved(step, &paused, "it returned without pausing", why);
    }
    c.same(step, &paused, heard);
    let install = Role::start(&c, &lab, "install-2").finish(&c);
    worker_1.go(&c);
    let worker_1_result = worker_1.finish(&c);
    let got = format!(
        "the authority's process: {install}; worker 1's process, let go: {worker_1_result}"
    );
    let landed = format!(
        "the authority's process: {INSTALLED}; worker 1's process, let go: {}",
        stale(1, 2)
    );
    let refused = format!(
        "the authority's process: {}; worker 1's process, let go: {}",
        contention(),
        applied(5)
    );
    c.same(
        "the authority's process installs 2 while worker 1 is paused",
        if got == landed { &landed } else { &refused },
        &got,
    );
    if got == landed {
        c.state(&lab, A, 2, 0);
        c.records(&lab, A, &[]);
        return;
    }

    c.same(
        "the authority's process, again",
        INSTALLED,
        Role::start(&c, &lab, "install-2").finish(&c),
    );
    c.same(
        "worker 1's process: apply(fund-A, generation 1, \"w1-again\", +5)",
        stale(1, 2),
        Role::start(&c, &lab, "apply-under-1").finish(&c),
    );
    c.state(&lab, A, 2, 5);
    c.records(&lab, A, &[rec(A, "w1", 5, 5, 1)]);
}

/// A role's process, with its stdin and stdout.
struct Role {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Role {
    /// Starts this test again as `role`, on `lab`.
    fn start(c: &Check, lab: &PgLab, role: &str) -> Role {
        let exe = std::env::current_exe()
            .unwrap_or_else(|error| c.not_run("find the test binary", error));
        let name = std::thread::current().name().unwrap_or_default().to_owned();
        let mut child = Command::new(exe)
            .args(["--exact", &name, "--nocapture", "--test-threads", "1"])
            .env(ROLE, role)
            .env(LAB_VARIABLE, lab.address())
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| c.not_run(format_args!("start the {role} process"), error));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("the child's stdout is piped"));
        Role {
            child,
            stdin,
            stdout,
        }
    }

    /// The next line the role says, or what became of it if it said none.
    fn hears(&mut self, c: &Check) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            match self.stdout.read_line(&mut line) {
                Ok(0) => {
                    let status = self.child.wait().map(|s| s.to_string());
                    return format!("the process ended without a word ({status:?})");
                }
                // libtest's "test <name> ... " may start the same line.
                Ok(_) => {
                    if let Some((_, said)) = line.trim_end().split_once(SAYS) {
                        return said.to_owned();
                    }
                }
                Err(error) => c.not_run("read the child's output", error),
            }
        }
    }

    /// Lets a waiting role go on.
    fn go(&mut self, c: &Check) {
        if let Some(mut stdin) = self.stdin.take() {
            if let Err(error) = writeln!(stdin, "go") {
                c.not_run("tell the child to go on", error);
            }
        }
    }

    /// The role's last word, once it has ended.
    fn finish(mut self, c: &Check) -> String {
        drop(self.stdin.take());
        let said = self.hears(c);
        let _ = self.child.wait();
        said
    }
}

/// The child's side: connect to the parent's lab over TCP, act out `role`,
/// say what came of it, exit. Never returns. (A child starts no server and
/// creates no lab: it opens its parent's.)
fn child(role: &str) -> ! {
    crate::support::wire();
    let address = std::env::var(LAB_VARIABLE).unwrap_or_default();
    let lab = PgLab::open_existing(&address).unwrap_or_else(|error| {
        say(describe_error(&error));
        std::process::exit(0)
    });
    let mut db = lab.connect().unwrap_or_else(|error| {
        say(describe_error(&error));
        std::process::exit(0)
    });
    match role {
        "check-then-apply" => {
            let held = lab.state(A).map(|state| state.generation).unwrap_or(0);
            say(format_args!("checked: generation {held}"));
            wait_for_go();
            say(describe(&db.apply(A, held, "w1", 5)));
        }
        "pause-inside-apply" => {
            let paused = std::rc::Rc::new(std::cell::Cell::new(false));
            let hook_paused = std::rc::Rc::clone(&paused);
            db.on_checkpoint(move |checkpoint| {
                if checkpoint == Checkpoint::GenerationRead && !hook_paused.replace(true) {
                    say(format_args!("paused {checkpoint}"));
                    wait_for_go();
                }
                Ok(())
            });
            let result = db.apply(A, 1, "w1", 5);
            match db.unobserved() {
                Some(why) if !paused.get() => say(format_args!("{UNOBSERVED}{why}")),
                _ => say(describe(&result)),
            }
        }
        "install-2" => say(describe_install(&db.install_generation(A, 2))),
        "apply-under-2" => say(describe(&db.apply(A, 2, "w2", 3))),
        "apply-under-1" => say(describe(&db.apply(A, 1, "w1-again", 5))),
        other => say(format_args!("unknown role {other:?}")),
    }
    std::process::exit(0)
}

/// Blocks until the parent writes a line (or closes the pipe).
fn wait_for_go() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// One line for the parent, flushed now.
fn say(line: impl Display) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{SAYS}{line}");
    let _ = stdout.flush();
}
