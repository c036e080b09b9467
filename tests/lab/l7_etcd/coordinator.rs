//! L7.1, L7.2, L7.4-L7.6 on the shared cluster: a frozen holder, the
//! counterexample that trusts the lock, a holder that finds a newer
//! generation, a lost response, and where the token comes from. Each test
//! runs its scene (`src/scenes/l7.rs`).

use fencing_lab::etcd::Moment;
use fencing_lab::scenes::l7::{self, Lapse};

use super::{claim, serve_if_worker, shared};

/// Frozen at the call of apply, right after the install returned (a
/// worker that reads the generation again after installing would borrow
/// the new holder's), or as it reads the installed generation (a worker
/// that checks its lease, then reads the generation and presents it, is
/// frozen between the two: its check passed, its read finds the new
/// holder's). A worker that never reads the generation is not stopped
/// there, and must simply do its job.
#[rstest::rstest]
#[case::about_to_apply(Moment::Acting)]
#[case::just_installed(Moment::Installed)]
#[case::reading_the_generation(Moment::Reading)]
fn l7_1_frozen_worker_whose_lease_lapsed_is_refused_as_stale_when_it_wakes(#[case] at: Moment) {
    serve_if_worker();
    let c = claim("L7.1");
    let mut w = shared(&c);
    c.run(l7::frozen_worker_is_refused_as_stale(
        &c,
        &mut w,
        at,
        Lapse::Revoked,
    ));
}

/// The counterexample (both workers act with the generation they read)
/// lets the woken holder's write through; yours, in the same schedule, is
/// refused.
#[test]
fn l7_2_a_worker_that_trusts_the_lock_lets_the_woken_write_through_yours_does_not() {
    serve_if_worker();
    let c = claim("L7.2");
    c.run(l7::trusting_worker_lets_the_woken_write_through(
        &c,
        &mut shared(&c),
    ));
    c.run(l7::yours_refuses_the_woken_write(&c, &mut shared(&c)));
}

#[test]
fn l7_4_holder_frozen_after_locking_that_finds_a_newer_generation_stops_without_applying() {
    serve_if_worker();
    let c = claim("L7.4");
    c.run(l7::holder_frozen_after_locking_stops_without_applying(
        &c,
        &mut shared(&c),
    ));
}

/// Taking the lock fails: the worker's lease is revoked before the lock is
/// granted (it stands for a lease that ran out while the worker waited).
/// The worker must not act: no lock, no token, no apply. A worker that
/// falls back to the installed generation when the lock fails would write
/// here without holding anything. Then a worker whose lease is alive does
/// its job, as usual.
#[test]
fn l7_4_a_worker_whose_lease_is_lost_before_the_lock_is_granted_never_applies() {
    serve_if_worker();
    let c = claim("L7.4");
    c.run(l7::lease_lost_before_the_lock_is_granted(
        &c,
        &mut shared(&c),
    ));
}

#[test]
fn l7_5_retry_of_a_request_whose_response_was_lost_gets_its_original_result() {
    serve_if_worker();
    let c = claim("L7.5");
    c.run(l7::retry_of_a_lost_response_gets_the_original(
        &c,
        &mut shared(&c),
    ));
}

#[test]
fn l7_6_token_comes_from_the_lock_so_a_worker_that_leased_first_but_locked_second_acts() {
    serve_if_worker();
    let c = claim("L7.6");
    c.run(l7::token_comes_from_the_lock(&c, &mut shared(&c)));
}
