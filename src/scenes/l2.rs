//! L2: an explicit contract per resource.

use super::expect::{INSTALLED, applied, never_issued, not_higher, rec, rejected, stale};
use super::{A, B, Observer, Stage};
use crate::transcript::Halt;
use crate::{LabError, Store};

/// L2.1: installing on fund-A says nothing about fund-B.
pub fn resources_are_independent<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.1", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.tell_state(B)?;
    s.state(B, 1, 0)?;
    s.apply("worker B", &mut worker, (B, 1, "r1", 3), applied(3))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 3), stale(1, 2))?;

    s.state(A, 2, 0)?;
    s.state(B, 1, 3)
}

/// L2.2: a worker that invents 3 while 2 is installed is refused, and the
/// refusal says "never issued", not "stale".
pub fn invented_generation_is_never_issued<S: Store>(
    o: &dyn Observer,
    lab: &S,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.2", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker X", &mut worker, (A, 3, "r1", 1), never_issued(3, 2))?;
    s.apply("worker A", &mut worker, (A, 1, "r1", 1), stale(1, 2))?;
    s.apply(
        "worker X",
        &mut worker,
        (A, i64::MAX, "r1", 1),
        never_issued(i64::MAX, 2),
    )?;

    s.observe(A, 2, 0, &[])
}

/// L2.3: the installed `generation` is accepted, and apply answers with the
/// value after `delta`.
pub fn installed_generation_is_accepted<S: Store>(
    o: &dyn Observer,
    lab: &S,
    generation: i64,
    delta: i64,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.3", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    if generation > 1 {
        s.install("authority", &mut authority, A, generation, INSTALLED)?;
    }
    s.apply(
        "worker A",
        &mut worker,
        (A, generation, "r1", delta),
        applied(delta),
    )?;
    s.apply(
        "worker A",
        &mut worker,
        (A, generation, "r2", 10),
        applied(delta + 10),
    )?;

    s.tell_state(A)?;
    s.state(A, generation, delta + 10)
}

/// L2.4: the authority only moves forward; installing `again` after 2 is
/// refused.
pub fn install_only_moves_forward<S: Store>(
    o: &dyn Observer,
    lab: &S,
    again: i64,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.4", lab);
    let mut authority = s.connect()?;

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.install("authority", &mut authority, A, again, not_higher(again, 2))?;
    s.state(A, 2, 0)?;
    s.install("authority", &mut authority, A, 3, INSTALLED)?;
    s.tell_state(A)?;
    s.state(A, 3, 0)
}

/// Generations at digit boundaries and at the top of the range, each pair
/// `(below, above)` one apart, in rising order: compared as text, "10" is
/// below "9".
pub const DIGIT_BOUNDARIES: [(i64, i64); 3] = [(9, 10), (99, 100), (i64::MAX - 1, i64::MAX)];

/// L2.2, across digit boundaries: for each pair of [`DIGIT_BOUNDARIES`],
/// with `above` installed, `below` is stale, `above + 1` never issued and
/// `above` accepted.
pub fn generations_compare_as_numbers<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.2", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    let mut value = 0;
    let mut records = Vec::new();
    for (below, above) in DIGIT_BOUNDARIES {
        let id = format!("r{above}");
        s.install("authority", &mut authority, A, below, INSTALLED)?;
        s.install("authority", &mut authority, A, above, INSTALLED)?;
        s.apply(
            "worker A",
            &mut worker,
            (A, below, &id, 1),
            stale(below, above),
        )?;
        if let Some(invented) = above.checked_add(1) {
            s.apply(
                "worker X",
                &mut worker,
                (A, invented, &id, 1),
                never_issued(invented, above),
            )?;
        }
        value += 1;
        s.apply("worker B", &mut worker, (A, above, &id, 1), applied(value))?;
        records.push(rec(A, &id, 1, value, above));
    }
    records.sort();
    s.observe(A, i64::MAX, value, &records)
}

/// L2.4, across digit boundaries: for each pair of [`DIGIT_BOUNDARIES`],
/// with `above` installed, installing `below` again is refused as not
/// higher.
pub fn install_compares_numbers<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.4", lab);
    let mut authority = s.connect()?;

    for (below, above) in DIGIT_BOUNDARIES {
        s.install("authority", &mut authority, A, below, INSTALLED)?;
        s.install("authority", &mut authority, A, above, INSTALLED)?;
        s.install(
            "authority",
            &mut authority,
            A,
            below,
            not_higher(below, above),
        )?;
        s.state(A, above, 0)?;
    }
    Ok(())
}

/// L2.5: an unknown resource is an error, for apply and for install, and
/// nothing is created for it.
pub fn unknown_resource_is_an_error<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.5", lab);
    let (mut worker, mut authority) = (s.connect()?, s.connect()?);

    let unknown = || rejected(LabError::UnknownResource("fund-C".to_owned()));
    s.apply("worker A", &mut worker, ("fund-C", 1, "r1", 5), unknown())?;
    s.install("authority", &mut authority, "fund-C", 2, unknown())?;
    let names = s.lab.resource_names()?.join(", ");
    s.say("observer", format_args!("resources: {names}"));
    s.same("list resources", "fund-A, fund-B", names)?;
    s.records("fund-C", &[])?;
    // The known ones still work.
    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))
}

/// L2.6: the authority promised generation 2 to worker B but has not
/// installed it: the destination only knows what is installed.
pub fn granted_is_not_installed<S: Store>(o: &dyn Observer, lab: &S) -> Result<(), Halt> {
    let s = Stage::new(o, "L2.6", lab);
    let (mut old, mut new) = (s.connect()?, s.connect()?);
    let mut authority = s.connect()?;

    s.say(
        "authority",
        "grants generation 2 to worker B, but has not installed it yet",
    );
    s.apply("worker B", &mut new, (A, 2, "b1", 10), never_issued(2, 1))?;
    s.apply("worker A", &mut old, (A, 1, "a1", 1), applied(1))?;
    // Now the authority installs what it granted.
    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.apply("worker B", &mut new, (A, 2, "b1", 10), applied(11))?;
    s.apply("worker A", &mut old, (A, 1, "a2", 1), stale(1, 2))?;

    s.tell_state(A)?;
    s.records(A, &[rec(A, "a1", 1, 1, 1), rec(A, "b1", 10, 11, 2)])
}
