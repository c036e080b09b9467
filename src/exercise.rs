//! The learner's code as the harness calls it: the table of functions the
//! program that runs the lab hands over (`wire`), and the two SQLite calls,
//! each run inside the connection's checkpoint layer and behind the panic
//! guard. Callers go through [`Session`](crate::Session)'s methods on a
//! [`LabConnection`].

use crate::{LabConnection, LabError, Outcome, claims, facts, panics};

/// The learner's functions (or the reference's), as a table the harness
/// calls through.
pub use fencing_lab_api::implementation::Implementation;

/// The implementation this process runs, handed over by [`wire`].
static WIRED: std::sync::OnceLock<Implementation> = std::sync::OnceLock::new();

/// Hands the harness the functions it calls: the program that runs the
/// lab (the graded test binary, `cargo run`) passes
/// `fencing_lab_exercises::IMPLEMENTATION` before its first call. The
/// harness never links the learner's crate, so a save under `exercises/`
/// rebuilds that crate and the program, never the harness. The first
/// table handed over stays; later calls change nothing.
pub fn wire(implementation: Implementation) {
    let _ = WIRED.set(implementation);
}

/// The implementation [`wire`] handed over.
///
/// # Panics
///
/// When nothing was: a bug of the program that runs the lab, not of the
/// code under test.
pub fn implementation() -> &'static Implementation {
    WIRED.get().expect(
        "the harness was handed no implementation: the program must call \
         fencing_lab::wire(fencing_lab_exercises::IMPLEMENTATION) first",
    )
}

/// The authority installs `new_generation` on `resource` (the learner's
/// `exercises/install_generation.rs`).
pub(crate) fn install_generation(
    db: &mut LabConnection,
    resource: &str,
    new_generation: i64,
) -> Result<(), LabError> {
    let call = claims::facts::Call::Install {
        resource: resource.to_owned(),
        generation: new_generation,
    };
    let hooks = db.hooks();
    hooks.call(call, facts::install_answer, || {
        hooks.around(|| {
            panics::guard("install_generation", claims::INSTALL, || {
                (implementation().install_generation)(&mut db.exercise(), resource, new_generation)
            })
        })
    })
}

/// The worker asks the destination to apply `delta` to `resource` under
/// `generation`, as request `request_id` (the learner's
/// `exercises/apply.rs`).
pub(crate) fn apply(
    db: &mut LabConnection,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    let call = claims::facts::Call::Apply {
        resource: resource.to_owned(),
        generation,
        request_id: request_id.to_owned(),
        delta,
    };
    let hooks = db.hooks();
    hooks.call(call, facts::answer, || {
        hooks.around(|| {
            panics::guard("apply", claims::APPLY, || {
                (implementation().apply)(
                    &mut db.exercise(),
                    resource,
                    generation,
                    request_id,
                    delta,
                )
            })
        })
    })
}
