//! L7.3: the cluster's leader is killed between two holders, on a cluster
//! of the test's own. The test runs its scene (`src/scenes/l7.rs`).

use fencing_lab::describe_error;
use fencing_lab::etcd::Cluster;
use fencing_lab::scenes::l7;

use super::{claim, on, serve_if_worker};

#[test]
fn l7_3_tokens_keep_rising_across_a_leader_kill_and_the_old_holder_is_still_refused() {
    serve_if_worker();
    let c = claim("L7.3");
    let cluster = Cluster::start()
        .unwrap_or_else(|error| c.not_run("start an etcd cluster", describe_error(&error)));
    let leader = cluster
        .leader(0)
        .unwrap_or_else(|error| c.not_run("find the leader", describe_error(&error)));
    // Workers connect to a member that does not lead now, so killing the
    // leader never cuts them off.
    let mut w = on(&c, &cluster, cluster.follower_of(&leader));
    c.run(l7::leader_killed_between_two_holders(&c, &mut w));
}
