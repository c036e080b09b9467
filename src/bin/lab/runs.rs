//! `--runs`: the lessons' key scenes as the destination saw them run: each scene
//! played once on a fresh lab against whichever implementation is compiled
//! in, and the lab's events (`fencing_lab::checkpoint::Trace`) kept whole. `cargo
//! run -- --runs` prints them a line each; `cargo book` runs that against
//! the reference and draws each (`book/src/runs/`), so the book's pictures
//! come from a real run's facts, never from its words.
//!
//! A lab's events hold what goes through the learner's two functions and
//! an operator's statements past them (L5.3's direct write, L5.4's
//! restore). Built with the etcd track, the etcd chapter's first scene
//! (L7.1, a lease that really runs out while its holder is frozen) is drawn
//! too, on a private cluster of its own, so its tokens (the cluster's
//! revisions) are the same each time; its workers report their calls, and
//! the test and etcd what they did, into the same events.

use fencing_lab::claims::facts::wire;
use fencing_lab::scenes::{Observer, Step, l1, l3, l4, l5};
use fencing_lab::transcript::Halt;
use fencing_lab::{Checkpoint, Journal, Lab};

/// A scene to draw: its claim, what it shows, and how to play it.
type Scene = (
    &'static str,
    &'static str,
    fn(&dyn Observer, &Lab) -> Result<(), Halt>,
);

/// The scenes drawn, in the lessons' order.
const SCENES: [Scene; 6] = [
    (
        "L1.1",
        "worker A read generation 1, then paused while the authority installed 2: its apply with 1 is refused as stale",
        |o, lab| l1::stale_worker(o, lab),
    ),
    (
        "L3.2",
        "apply holds the write lock from its read of the generation to its commit: the install tried while it is held meets contention",
        |o, lab| l3::apply_holds_the_lock(o, lab, Checkpoint::GenerationRead),
    ),
    (
        "L4.2",
        "r1 (+7) returns 7, r2 (+5) makes 12, and r1 again is a replay: it returns 7, not 12",
        |o, lab| l4::replay_returns_the_original(o, lab),
    ),
    (
        "L5.1",
        "a fault between the value and the record rolls both back, and the retry applies once",
        |o, lab| l5::fault_rolls_back(o, lab),
    ),
    (
        "L5.3",
        "generation 2 is installed and worker A's apply with 1 is refused; an operator's direct SQL then sets the value to 100, and nothing checks it",
        |o, lab| l5::direct_sql_bypasses_the_contract(o, lab),
    ),
    (
        "L5.4",
        "an operator restores generation 1 from an old backup: worker A's apply with 1, refused before, now applies, and generation 2 is never issued",
        |o, lab| l5::restoring_an_old_generation(o, lab),
    ),
];

/// Observes a scene without telling it: a step that differs stops it.
struct Quiet;

impl Observer for Quiet {
    fn check(&self, claim: &'static str, step: Step) -> Result<(), Halt> {
        match step.failed {
            false => Ok(()),
            true => Err(Halt(format!("{claim}: {step}"))),
        }
    }
}

/// Each scene's claim, what it shows, and its run as
/// [`wire`] writes it.
///
/// # Errors
///
/// A scene that did not run to its end (the implementation compiled in
/// answered otherwise), or a lab that could not be made.
pub(crate) fn runs() -> Result<Vec<(&'static str, &'static str, String)>, Halt> {
    SCENES
        .iter()
        .map(|&(claim, shows, play)| {
            let lab = Lab::new(Journal::Rollback)?;
            play(&Quiet, &lab)?;
            let trace = lab.trace();
            Ok((claim, shows, wire::encode(&trace.names(), &trace.events())))
        })
        .chain(etcd())
        .collect()
}

/// The etcd chapter's first scene, where the lab is built with the etcd
/// track: worker 1 frozen about to call apply while its lease runs out,
/// worker 2 taking the lock and writing, worker 1 woken and refused.
#[cfg(feature = "etcd")]
fn etcd() -> Option<Result<(&'static str, &'static str, String), Halt>> {
    use fencing_lab::etcd::{Cluster, Moment};
    use fencing_lab::scenes::l7::{self, Lapse, World};
    let play = || -> Result<String, Halt> {
        let cluster = Cluster::start()?;
        let leader = cluster.leader(0)?;
        let member = cluster.follower_of(&leader);
        let program = || {
            std::process::Command::new(
                std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into()),
            )
        };
        let namespace = format!("runs-{}", std::process::id());
        let mut world = World::new(&Quiet, "L7.1", &cluster, member, namespace, &program)?;
        l7::frozen_worker_is_refused_as_stale(&Quiet, &mut world, Moment::Acting, Lapse::RunsOut)?;
        let trace = world.lab.trace();
        Ok(wire::encode(&trace.names(), &trace.events()))
    };
    Some(play().map(|line| {
        (
            "L7.1",
            "on etcd: worker 1 holds the lock and its token, and is frozen about to apply; its lease runs out, worker 2 takes the lock and writes, and worker 1, woken, is refused as stale",
            line,
        )
    }))
}

/// Without the etcd track, no etcd scene.
#[cfg(not(feature = "etcd"))]
fn etcd() -> Option<Result<(&'static str, &'static str, String), Halt>> {
    None
}
