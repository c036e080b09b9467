//! L2: an explicit contract per resource.

use fencing_lab::LabError;
use rstest::rstest;

use super::{Lab, claim, lab};
use crate::support::*;

/// Installing on fund-A says nothing about fund-B.
#[rstest]
fn l2_1_new_generation_on_fund_a_leaves_fund_b_at_1(lab: Lab) {
    let c = claim("L2.1");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.state(&lab, B, 1, 0);
    c.apply(&mut worker, (B, 1, "r1", 3), applied(3));
    c.apply(&mut worker, (A, 1, "r1", 3), stale(1, 2));

    c.state(&lab, A, 2, 0);
    c.state(&lab, B, 1, 3);
}

/// A worker that invents 3 while 2 is installed is refused, and the refusal
/// says "never issued", not "stale".
#[rstest]
fn l2_2_invented_higher_generation_is_never_issued_not_stale(lab: Lab) {
    let c = claim("L2.2");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut worker, (A, 3, "r1", 1), never_issued(3, 2));
    c.apply(&mut worker, (A, 1, "r1", 1), stale(1, 2));
    c.apply(
        &mut worker,
        (A, i64::MAX, "r1", 1),
        never_issued(i64::MAX, 2),
    );

    c.state(&lab, A, 2, 0);
    c.records(&lab, A, &[]);
}

/// The installed generation is accepted, and apply answers with the value
/// after the delta.
#[rstest]
#[case::first_generation(1, 5)]
#[case::negative_delta(1, -4)]
#[case::after_an_install(2, 5)]
fn l2_3_installed_generation_is_accepted_and_returns_the_new_value(
    lab: Lab,
    #[case] generation: i64,
    #[case] delta: i64,
) {
    let c = claim("L2.3");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    if generation > 1 {
        c.install(&mut authority, A, generation, INSTALLED);
    }
    c.apply(&mut worker, (A, generation, "r1", delta), applied(delta));
    c.apply(&mut worker, (A, generation, "r2", 10), applied(delta + 10));

    c.state(&lab, A, generation, delta + 10);
}

/// The authority only moves forward.
#[rstest]
#[case::equal(2)]
#[case::lower(1)]
fn l2_4_install_refuses_an_equal_or_lower_generation(lab: Lab, #[case] again: i64) {
    let c = claim("L2.4");
    let mut authority = lab.connect().unwrap();

    c.install(&mut authority, A, 2, INSTALLED);
    c.install(&mut authority, A, again, not_higher(again, 2));
    c.state(&lab, A, 2, 0);
    c.install(&mut authority, A, 3, INSTALLED);
    c.state(&lab, A, 3, 0);
}

/// An unknown resource is an error, for apply and for install, and nothing
/// is created for it.
#[rstest]
fn l2_5_unknown_resource_is_an_error_and_nothing_is_created(lab: Lab) {
    let c = claim("L2.5");
    let (mut worker, mut authority) = (lab.connect().unwrap(), lab.connect().unwrap());

    let unknown = || rejected(LabError::UnknownResource("fund-C".to_owned()));
    c.apply(&mut worker, ("fund-C", 1, "r1", 5), unknown());
    c.install(&mut authority, "fund-C", 2, unknown());
    c.same(
        "list resources",
        "fund-A, fund-B",
        lab.resource_names().unwrap().join(", "),
    );
    c.records(&lab, "fund-C", &[]);
    // The known ones still work.
    c.apply(&mut worker, (A, 1, "r1", 5), applied(5));
}

/// The authority promised generation 2 to worker B but has not installed
/// it: the destination only knows what is installed.
#[rstest]
fn l2_6_granted_but_not_installed_is_rejected_until_installed(lab: Lab) {
    let c = claim("L2.6");
    let (mut old, mut new) = (lab.connect().unwrap(), lab.connect().unwrap());
    let mut authority = lab.connect().unwrap();

    c.apply(&mut new, (A, 2, "b1", 10), never_issued(2, 1));
    c.apply(&mut old, (A, 1, "a1", 1), applied(1));
    // Now the authority installs what it granted.
    c.install(&mut authority, A, 2, INSTALLED);
    c.apply(&mut new, (A, 2, "b1", 10), applied(11));
    c.apply(&mut old, (A, 1, "a2", 1), stale(1, 2));

    c.records(&lab, A, &[rec(A, "a1", 1, 1, 1), rec(A, "b1", 10, 11, 2)]);
}
