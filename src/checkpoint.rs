//! Checkpoints: the places where a test may pause the destination or make it
//! fail.
//!
//! A race made with `sleep` happens sometimes; a race made with a checkpoint
//! happens every time. The harness's own statements ([`Tx`](crate::Tx)
//! methods) call the hook of their [`Destination`](crate::Destination) at
//! fixed points, so the learner cannot forget or misplace them. While the hook
//! runs, the destination is paused exactly there, with whatever locks it
//! holds; the hook may act on other connections and then let it go on
//! (`Ok(())`) or inject a fault (`Err(..)`).

use std::fmt;

use crate::LabError;

/// A point in `apply` or `install_generation` where the hook is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Checkpoint {
    /// Just after [`Tx::installed_generation`](crate::Tx::installed_generation)
    /// read the installed generation.
    GenerationRead,
    /// Just after [`Tx::find_record`](crate::Tx::find_record) looked up a
    /// request's record, whether it found one or not.
    RecordRead,
    /// Just before [`Tx::set_value`](crate::Tx::set_value) writes: every
    /// check is done and the effect is next.
    BeforeEffect,
    /// Just before [`Tx::insert_record`](crate::Tx::insert_record) writes
    /// the record. In the reference the value is written by then, so a fault
    /// here falls between the effect and its record.
    BeforeRecord,
    /// Just before [`Tx::set_generation`](crate::Tx::set_generation) writes a
    /// new generation.
    BeforeInstall,
    /// In the worker-side-check counterexample: the worker has checked its
    /// generation and is about to write without one.
    WorkerChecked,
}

impl fmt::Display for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Checkpoint::GenerationRead => "after the generation was read",
            Checkpoint::RecordRead => "after the record was looked up",
            Checkpoint::BeforeEffect => "before the effect",
            Checkpoint::BeforeRecord => "before the record",
            Checkpoint::BeforeInstall => "before the install",
            Checkpoint::WorkerChecked => "after the worker's check",
        })
    }
}

/// What a test runs at a checkpoint: act on other connections, then return
/// `Ok(())` to let the destination go on or an error to inject a fault.
pub type Hook = Box<dyn FnMut(Checkpoint) -> Result<(), LabError>>;

/// Runs `hook`, if a test installed one, at `checkpoint`: what every
/// connection's statements call at their fixed points.
pub(crate) fn run_hook(
    hook: &std::cell::RefCell<Option<Hook>>,
    checkpoint: Checkpoint,
) -> Result<(), LabError> {
    match hook.borrow_mut().as_mut() {
        Some(hook) => hook(checkpoint),
        None => Ok(()),
    }
}

/// Where the fault of the rollback claims falls, as its error says.
pub const BETWEEN_WRITES: &str = "between the value and the record";

/// The hook of the rollback claims. In each `apply` (counted from its
/// generation read) it runs `at_first_write` just before the first of the two
/// writes, the value and the record, and, with `fault`, injects
/// [`LabError::InjectedFault`] just before the second, whichever order the
/// code writes them in. So the fault always falls between the effect and its
/// record, and a correct `apply` that records first is judged the same as
/// one that writes the value first.
pub fn between_writes(
    fault: bool,
    at_first_write: impl FnMut() + 'static,
) -> impl FnMut(Checkpoint) -> Result<(), LabError> + 'static {
    on_writes(at_first_write, move || match fault {
        true => Err(LabError::InjectedFault(BETWEEN_WRITES)),
        false => Ok(()),
    })
}

/// The mechanism under [`between_writes`]: in each `apply` (counted from its
/// generation read), runs `at_first` just before the first of its two
/// writes and `at_second` just before the second, whichever order they come
/// in. The crash test's child aborts in `at_second`.
pub fn on_writes(
    mut at_first: impl FnMut() + 'static,
    mut at_second: impl FnMut() -> Result<(), LabError> + 'static,
) -> impl FnMut(Checkpoint) -> Result<(), LabError> + 'static {
    let mut writes = 0;
    move |checkpoint| {
        match checkpoint {
            Checkpoint::GenerationRead => writes = 0,
            Checkpoint::BeforeEffect | Checkpoint::BeforeRecord => {
                writes += 1;
                match writes {
                    1 => at_first(),
                    2 => return at_second(),
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}
