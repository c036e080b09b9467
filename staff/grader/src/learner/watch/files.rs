//! The file watcher's events: a save of an exercise file wakes the loop,
//! once the files have stood still.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::Event;

/// How long the files must stay still after a save before the next run: an
/// editor's save is often several writes (a temporary file, a rename).
const SETTLE: Duration = Duration::from_millis(200);

/// Watches `folder`, at any depth, sending a save of a source file as
/// [`Event::Saved`] until the watcher is dropped.
pub(super) fn watch(folder: &Path, tx: Sender<Event>) -> Result<RecommendedWatcher, String> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if !matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
        ) {
            return;
        }
        // Editors write swap and backup files beside the source; only Rust
        // sources count.
        if let Some(path) = event.paths.into_iter().find(|path| is_source(path)) {
            let _ = tx.send(Event::Saved(path));
        }
    })
    .map_err(|error| format!("cannot watch {}: {error}", folder.display()))?;
    watcher
        .watch(folder, RecursiveMode::Recursive)
        .map_err(|error| format!("cannot watch {}: {error}", folder.display()))?;
    Ok(watcher)
}

/// Waits until no file has changed for [`SETTLE`].
pub(super) fn settle(events: &Receiver<Event>) {
    loop {
        match events.recv_timeout(SETTLE) {
            Ok(Event::Saved(_)) => {}
            Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// An exercise file: Rust, or lesson 8's SQL (`exercises/postgres/contract.sql`).
fn is_source(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == "rs" || extension == "sql")
}

/// A saved file as the status line names it: from the checkout's root.
pub(super) fn shown(checkout: &Path, path: &Path) -> String {
    path.strip_prefix(checkout)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exercise_sources_wake_the_loop() {
        assert!(is_source(Path::new("exercises/apply.rs")));
        assert!(is_source(Path::new("exercises/postgres/contract.sql")));
        assert!(!is_source(Path::new("exercises/.apply.rs.swp")));
        assert!(!is_source(Path::new("exercises/4913")));
    }
}
