//! L7.3: the cluster's leader is killed between two holders, on a cluster
//! of the test's own.

use fencing_lab::etcd::{Moment, Role, serve_if_worker};

use super::{Expect, World, claim, job};
use crate::support::*;

#[test]
fn l7_3_tokens_keep_rising_across_a_leader_kill_and_the_old_holder_is_still_refused() {
    serve_if_worker();
    let c = claim("L7.3");
    let mut w = World::own(&c);

    let mut first = w.worker(&c, Role::Yours, job("w1", 5), &[Moment::Acting]);
    first
        .wait_at(Moment::Acting)
        .or_fail(&c, "worker 1, up to apply");
    let before = w.generation(&c);
    first.freeze().or_fail(&c, "freeze worker 1 (SIGSTOP)");
    first.go().or_fail(&c, "tell worker 1 to go on");

    // SIGKILL the leader; wait until the two others follow a new one.
    let cluster = w.cluster();
    let old = cluster
        .leader(0)
        .unwrap_or_else(|error| c.not_run("find the leader", fencing_lab::describe_error(&error)));
    cluster
        .kill(old.member)
        .unwrap_or_else(|error| c.not_run("kill the leader", fencing_lab::describe_error(&error)));
    let new = cluster.leader(old.term + 1).unwrap_or_else(|error| {
        c.not_run("elect a new leader", fencing_lab::describe_error(&error))
    });
    if new.member == old.member {
        c.not_run("elect a new leader", "the killed member still leads");
    }

    w.expire_holder(&c);
    let second = w.worker(&c, Role::Yours, job("w2", 3), &[]);
    let second = second
        .finish()
        .or_fail(&c, "worker 2, under the new leader");
    c.same(
        "worker 2, under the new leader: its job (+3)",
        applied(3),
        &second.outcome,
    );
    let after = w.generation(&c);
    if after <= before {
        c.fail(
            "worker 2, the first holder after the leader died",
            format!("a generation above worker 1's {before}"),
            format!("generation {after}"),
        );
    }

    first.thaw().or_fail(&c, "wake worker 1 (SIGCONT)");
    let first = first.finish().or_fail(&c, "worker 1, woken");
    c.same(
        "worker 1, woken after the leader died and worker 2 wrote: apply(+5)",
        stale(before, after),
        &first.outcome,
    );
    c.state(&w.lab, A, after, 3);
    c.records(&w.lab, A, &[rec(A, "w2", 3, 3, after)]);
}
