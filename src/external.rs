//! A stand-in for an external API (a payment provider, a mail server): a
//! ledger kept outside the database, so a database ROLLBACK cannot undo what
//! was written to it.

use std::cell::RefCell;
use std::rc::Rc;

/// The external system's own ledger. Clones share it, so a checkpoint hook
/// can hold one while the test keeps another.
#[derive(Debug, Clone, Default)]
pub struct ExternalApi {
    /// Every call received, in order.
    calls: Rc<RefCell<Vec<String>>>,
}

impl ExternalApi {
    /// A new, empty ledger.
    pub fn new() -> ExternalApi {
        ExternalApi::default()
    }

    /// Sends a call; the external side keeps it whatever the caller's
    /// database does next.
    pub fn call(&self, what: impl Into<String>) {
        self.calls.borrow_mut().push(what.into());
    }

    /// Every call the external side has received.
    pub fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }
}
