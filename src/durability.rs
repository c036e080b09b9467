//! How long a connection waits for the disk at each commit: SQLite's
//! `PRAGMA synchronous`, for the benchmark in `staff/bench/`, which measures the
//! guard at the settings a production service would choose.
//!
//! Every lab connection starts at `OFF` (see [`Lab::new`](crate::Lab::new)):
//! the lab's setting, chosen for the suite's speed. Nothing in the graded
//! suite changes it.

use std::fmt;

use crate::{LabConnection, LabError};

/// A level of SQLite's `PRAGMA synchronous`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// No wait for the disk: the lab's setting.
    Off,
    /// Waits at the critical moments only; in WAL mode, not at every commit.
    Normal,
    /// Waits for the disk at every commit: SQLite's default.
    Full,
}

impl Synchronous {
    /// The level's name in `PRAGMA synchronous`.
    pub fn sqlite_name(self) -> &'static str {
        match self {
            Synchronous::Off => "OFF",
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

impl fmt::Display for Synchronous {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sqlite_name())
    }
}

impl LabConnection {
    /// Sets `PRAGMA synchronous` on this connection only. Call it outside a
    /// transaction: SQLite refuses to change the level inside one.
    pub fn set_synchronous(&mut self, level: Synchronous) -> Result<(), LabError> {
        self.connection()
            .execute_batch(&format!("PRAGMA synchronous = {}", level.sqlite_name()))?;
        Ok(())
    }
}
