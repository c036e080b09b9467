//! When a call's effect committed, in the database's own words.
//!
//! A schedule judges a write by the generation installed when it
//! *committed*, and two deliveries by the order their effects committed in.
//! Neither can be read off the moment a call returned: code that commits its
//! write and then opens a second transaction (to read its result back, say)
//! may be paused between the two while an install gets in, and returns
//! after it, though its write went in before. So each worker's connection
//! reports, through SQLite's own hooks, every change to a resource's row
//! (`update_hook`: an `UPDATE`, a `REPLACE`, a delete and an insert alike)
//! and every commit and rollback of the transaction that made it. A commit
//! that carries such a change is stamped with its place on the
//! exploration's [`Clock`] and the generation installed at that moment.
//!
//! The hooks run inside the learner's statements, on the same thread, and
//! only store numbers: they never touch the database or the test's hooks.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use rusqlite::hooks::Action;

use crate::checkpoint::Trace;

/// The one order of an exploration's events: every commit that carried an
/// effect, and every call's return, take the next number.
#[derive(Clone, Default)]
pub(super) struct Clock(Arc<AtomicU64>);

impl Clock {
    /// The next number.
    pub(super) fn tick(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// The generation installed now, as the authority's answers say; shared
/// with the hooks, which read it at each commit.
#[derive(Clone)]
pub(super) struct Installed(Arc<AtomicI64>);

impl Installed {
    /// Starts at `generation`.
    pub(super) fn new(generation: i64) -> Installed {
        Installed(Arc::new(AtomicI64::new(generation)))
    }

    /// The generation installed now.
    pub(super) fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }

    /// An install committed.
    pub(super) fn set(&self, generation: i64) {
        self.0.store(generation, Ordering::Relaxed);
    }
}

/// A commit that changed a resource's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Committed {
    /// Its place on the exploration's clock.
    pub(super) order: u64,
    /// The generation installed when it committed.
    pub(super) installed: i64,
}

/// What one connection's hooks saw during the current call.
#[derive(Default)]
struct Seen {
    /// The open transaction changed a resource's row.
    changed: AtomicBool,
    /// The last commit of the call that carried such a change.
    committed: Mutex<Option<Committed>>,
}

/// One worker connection's effects, as its hooks report them.
pub(super) struct Effects(Arc<Seen>);

impl Effects {
    /// Hooks `conn` (a worker's: it never installs, so any change to a
    /// resource's row is an effect) to stamp its effects' commits with
    /// `clock` and `installed`, and to add every end of its transactions to
    /// the lab's events (`traced`, its connection's trace and number), as
    /// the connection's own hooks would have: these take their place.
    pub(super) fn watch(
        conn: &Connection,
        clock: &Clock,
        installed: &Installed,
        traced: Option<(Trace, usize)>,
    ) -> Effects {
        let seen = Arc::new(Seen::default());
        let on_change = Arc::clone(&seen);
        conn.update_hook(Some(move |_: Action, _: &str, table: &str, _: i64| {
            if table == "resources" {
                on_change.changed.store(true, Ordering::Relaxed);
            }
        }));
        let (on_commit, clock, installed) = (Arc::clone(&seen), clock.clone(), installed.clone());
        let (commit_trace, rollback_trace) = (traced.clone(), traced);
        conn.commit_hook(Some(move || {
            if let Some((trace, actor)) = &commit_trace {
                trace.ended(*actor, true);
            }
            if on_commit.changed.swap(false, Ordering::Relaxed) {
                let committed = Committed {
                    order: clock.tick(),
                    installed: installed.get(),
                };
                *lock(&on_commit.committed) = Some(committed);
            }
            // Let the commit go on.
            false
        }));
        let on_rollback = Arc::clone(&seen);
        conn.rollback_hook(Some(move || {
            on_rollback.changed.store(false, Ordering::Relaxed);
            if let Some((trace, actor)) = &rollback_trace {
                trace.ended(*actor, false);
            }
        }));
        Effects(seen)
    }

    /// Forgets what the last call did: a new call starts.
    pub(super) fn start(&self) {
        self.0.changed.store(false, Ordering::Relaxed);
        *lock(&self.0.committed) = None;
    }

    /// The last commit of this call that carried an effect, if any.
    pub(super) fn committed(&self) -> Option<Committed> {
        *lock(&self.0.committed)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
