//! L6: bad input gets a clear error and changes nothing.

use super::expect::{INSTALLED, applied, rec, rejected};
use super::{A, B, Observer, Stage};
use crate::transcript::Halt;
use crate::{LabError, Store};

/// L6.1: each bad apply, `(resource, generation, request_id, delta)`, is
/// refused with `error`, after a good request made the state worth
/// protecting; nothing moves.
pub fn bad_apply_changes_nothing<S: Store>(
    o: &dyn Observer,
    lab: &S,
    request: (&str, i64, &str, i64),
    error: LabError,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L6.1", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", 5), applied(5))?;
    s.apply("worker A", &mut worker, request, rejected(error))?;

    s.tell_state(A)?;
    s.state(A, 1, 5)?;
    s.state(B, 1, 0)?;
    s.records(A, &[rec(A, "r1", 5, 5, 1)])?;
    s.same(
        "list resources",
        "fund-A, fund-B",
        s.lab.resource_names()?.join(", "),
    )
}

/// L6.1: overflow in both directions is a typed error, never a wrapped
/// number or a silent REAL: `start`, then `delta` past the end.
pub fn overflow_is_a_typed_error<S: Store>(
    o: &dyn Observer,
    lab: &S,
    start: i64,
    delta: i64,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L6.1", lab);
    let mut worker = s.connect()?;

    s.apply("worker A", &mut worker, (A, 1, "r1", start), applied(start))?;
    s.apply(
        "worker A",
        &mut worker,
        (A, 1, "r2", delta),
        rejected(LabError::Overflow {
            value: start,
            delta,
        }),
    )?;
    s.observe(A, 1, start, &[rec(A, "r1", start, start, 1)])
}

/// L6.1: install_generation refuses what no authority could mean,
/// `generation` on `resource`, with `error`, and changes nothing.
pub fn bad_install_changes_nothing<S: Store>(
    o: &dyn Observer,
    lab: &S,
    resource: &str,
    generation: i64,
    error: LabError,
) -> Result<(), Halt> {
    let s = Stage::new(o, "L6.1", lab);
    let mut authority = s.connect()?;

    s.install("authority", &mut authority, A, 2, INSTALLED)?;
    s.install(
        "authority",
        &mut authority,
        resource,
        generation,
        rejected(error),
    )?;
    s.tell_state(A)?;
    s.state(A, 2, 0)?;
    s.same(
        "list resources",
        "fund-A, fund-B",
        s.lab.resource_names()?.join(", "),
    )
}
