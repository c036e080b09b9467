//! The transcript's etcd chapter: the scenes of [`crate::scenes::l7`], the
//! same the graded tests run, one case of each, on a private cluster with
//! workers as processes of this program: a lease that really runs out
//! while its holder is frozen, a counterexample, a holder that finds it was
//! superseded, a lease lost before the lock, a lost response retried, where
//! the token comes from, and last the leader's process killed between two
//! holders.
//!
//! The chapter starts its own cluster, so the cluster's revisions (the
//! tokens) are the same every time the same code runs; lease ids, ports,
//! process ids and member names are never printed. A step whose outcome
//! differs from what its claim expects stops the chapter, and says which
//! file to open.

use crate::claims::Lesson;
use crate::etcd::{Cluster, Moment};
use crate::scenes::Observer;
use crate::scenes::l7::{self, Lapse, World};
use crate::transcript::Halt;

pub use crate::scenes::l7::Program;

/// The chapter's heading.
pub const LESSON: Lesson = crate::claims::LESSONS[6];

/// The chapter, told to `o`, with workers started by `program`.
pub fn chapter(o: &dyn Observer, program: Program<'_>) -> Result<(), Halt> {
    o.note("Executed here: three etcd members (Debian's etcd program) on loopback ports, and each worker a process of this program.");
    let cluster = &Cluster::start()?;
    let leader = cluster.leader(0)?;
    // Workers connect to a member that does not lead, so that killing the
    // leader (L7.3, the last scene) never cuts them off.
    let member = cluster.follower_of(&leader);
    let mut number = 0;
    let mut world = move |claim| {
        number += 1;
        let namespace = format!("story-{}-{number}", std::process::id());
        World::new(o, claim, cluster, member, namespace, program)
    };

    o.note("A worker takes fund-A's lock under a lease of 2 s, installs its token, and is frozen (SIGSTOP) just before apply.");
    o.note("Frozen, it cannot keep its lease alive: the lease runs out and etcd deletes the lock key, seen here through a watch.");
    l7::frozen_worker_is_refused_as_stale(o, &mut world("L7.1")?, Moment::Acting, Lapse::RunsOut)?;

    o.note("The counterexample: the same schedule, where each worker trusts \"I hold the lock\" and presents the generation it reads.");
    o.note(
        "From here on the test revokes the frozen worker's lease, standing for one that ran out.",
    );
    l7::trusting_worker_lets_the_woken_write_through(o, &mut world("L7.2")?)?;

    o.note("Your worker in the same schedule: woken, its write is refused.");
    l7::yours_refuses_the_woken_write(o, &mut world("L7.2")?)?;

    o.note(
        "A worker frozen right after taking the lock wakes to find a newer generation installed.",
    );
    l7::holder_frozen_after_locking_stops_without_applying(o, &mut world("L7.4")?)?;
    o.note("A worker whose lease is revoked before the lock is granted: taking the lock fails, and it must not act.");
    l7::lease_lost_before_the_lock_is_granted(o, &mut world("L7.4")?)?;

    o.note("A worker's process dies after its job, before it reports; its retry, after the lock changed hands twice, gets the original result.");
    l7::retry_of_a_lost_response_gets_the_original(o, &mut world("L7.5")?)?;

    o.note("The token comes from the lock, not from the lease: a worker that leased first but took the lock second acts with a higher one.");
    l7::token_comes_from_the_lock(o, &mut world("L7.6")?)?;

    o.note("The leader's process is killed (SIGKILL) between two holders; the two other members elect a new one.");
    l7::leader_killed_between_two_holders(o, &mut world("L7.3")?)?;
    Ok(())
}
