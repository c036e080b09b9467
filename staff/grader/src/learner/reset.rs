//! `cargo grade --reset exercises/apply.rs`: one exercise file back to its
//! stub, after a confirmation (`--yes` for scripts), the learner's version
//! kept beside it as `exercises/apply.rs.bak` (`.bak.2`, … if that exists).
//! The watch mode does the same with `x`.
//!
//! Where the stubs come from: a copy compiled into the grader
//! (`staff/grader/stubs/`, by `include_str!`; each named for its exercise file,
//! with `.stub` added, so no tool takes the copies for code). Not `exercises/` (the learner's
//! files, which `staff/class*/stubs` link to), not git (`HEAD` holds the
//! learner's own commits, and a classroom's template repository has no
//! history of the lab). A unit test holds the copy to the committed
//! `exercises/`, so a course author who changes a stub is told to copy it.
//! The backup sits beside the file, not under `target/`, so that
//! `cargo clean` does not take the learner's work with it; it does not end
//! in `.rs`, so nothing compiles it and the watch mode does not wake for it.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Every exercise file and its stub, as the lab commits them.
const STUBS: &[(&str, &str)] = &[
    (
        "exercises/install_generation.rs",
        include_str!("../../stubs/install_generation.rs.stub"),
    ),
    (
        "exercises/apply.rs",
        include_str!("../../stubs/apply.rs.stub"),
    ),
    (
        "exercises/postgres/install_generation.rs",
        include_str!("../../stubs/postgres/install_generation.rs.stub"),
    ),
    (
        "exercises/postgres/apply.rs",
        include_str!("../../stubs/postgres/apply.rs.stub"),
    ),
    (
        "exercises/postgres/contract.sql",
        include_str!("../../stubs/postgres/contract.sql.stub"),
    ),
    (
        "exercises/etcd/worker.rs",
        include_str!("../../stubs/etcd/worker.rs.stub"),
    ),
];

/// The exercise files that can be reset, in the order the learner meets
/// them.
pub fn files() -> impl Iterator<Item = &'static str> {
    STUBS.iter().map(|(file, _)| *file)
}

/// The stub of an exercise file (`exercises/apply.rs`).
pub fn stub(file: &str) -> Option<&'static str> {
    STUBS
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, stub)| *stub)
}

/// The exercise file `given` names, as the checkout's relative path:
/// `exercises/apply.rs`, `apply.rs`, `./exercises/apply.rs`, or a path to it.
pub fn exercise(checkout: &Path, given: &str) -> Result<&'static str, String> {
    let path = Path::new(given);
    let mut candidates = vec![given.trim_start_matches("./").to_owned()];
    if let Ok(absolute) = std::path::absolute(path) {
        let checkout = std::fs::canonicalize(checkout).unwrap_or_else(|_| checkout.to_owned());
        let absolute = std::fs::canonicalize(&absolute).unwrap_or(absolute);
        if let Ok(inside) = absolute.strip_prefix(&checkout) {
            candidates.push(inside.to_string_lossy().into_owned());
        }
    }
    for candidate in &candidates {
        let candidate = candidate.replace('\\', "/");
        let named = if candidate.starts_with("exercises/") {
            candidate
        } else {
            format!("exercises/{candidate}")
        };
        if let Some(file) = files().find(|file| *file == named) {
            return Ok(file);
        }
    }
    Err(format!(
        "no stub for {given:?}: the exercise files are {}",
        files().collect::<Vec<_>>().join(", ")
    ))
}

/// Where the learner's version of `path` is kept: `path.bak`, or the first
/// of `path.bak.2`, `path.bak.3`, … that does not exist.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".bak");
    let first = PathBuf::from(&name);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|number| {
            let mut numbered = name.clone();
            numbered.push(format!(".{number}"));
            PathBuf::from(numbered)
        })
        .find(|path| !path.exists())
        .unwrap_or(first)
}

/// What a reset did.
#[derive(Debug, PartialEq, Eq)]
pub enum Done {
    /// The file was the stub already: nothing was written.
    AlreadyStub,
    /// The file is the stub again; the learner's version is at this path.
    Reset(PathBuf),
}

/// Puts the stub of `file` (an entry of [`files`]) in place under
/// `checkout`, the learner's version copied to [`backup_path`] first.
pub fn reset(checkout: &Path, file: &str) -> Result<Done, String> {
    let stub = stub(file).ok_or_else(|| format!("no stub for {file}"))?;
    let path = checkout.join(file);
    let mine = match std::fs::read(&path) {
        Ok(mine) => Some(mine),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("cannot read {file}: {error}")),
    };
    if mine.as_deref() == Some(stub.as_bytes()) {
        return Ok(Done::AlreadyStub);
    }
    let backup = backup_path(&path);
    if let Some(mine) = &mine {
        std::fs::write(&backup, mine).map_err(|error| {
            format!("cannot keep your version as {}: {error}", backup.display())
        })?;
    }
    std::fs::write(&path, stub).map_err(|error| format!("cannot write {file}: {error}"))?;
    Ok(Done::Reset(backup))
}

/// `backup` as the learner would type it: relative to the checkout.
pub fn shown(checkout: &Path, backup: &Path) -> String {
    backup
        .strip_prefix(checkout)
        .unwrap_or(backup)
        .display()
        .to_string()
}

/// `cargo grade --reset FILE [--yes]`: asks on a terminal (y/N), refuses
/// elsewhere without `--yes`, then resets.
pub fn run(given: &str, yes: bool) -> Result<ExitCode, String> {
    let checkout = crate::engine::checkout::repository();
    let file = exercise(&checkout, given)?;
    let path = checkout.join(file);
    if std::fs::read(&path).is_ok_and(|mine| stub(file).is_some_and(|s| s.as_bytes() == mine)) {
        println!("{file} is the stub already: nothing to reset");
        return Ok(ExitCode::SUCCESS);
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(format!(
                "--reset {file} asks before it overwrites your work, and standard input is not \
                 a terminal: add --yes to reset without asking"
            ));
        }
        print!(
            "Reset {file} to its stub? Your version is kept as {}. [y/N] ",
            shown(&checkout, &backup_path(&path))
        );
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|error| format!("cannot read the answer: {error}"))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            println!("nothing changed");
            return Ok(ExitCode::FAILURE);
        }
    }
    match reset(&checkout, file)? {
        Done::AlreadyStub => println!("{file} is the stub already: nothing to reset"),
        Done::Reset(backup) => println!(
            "{file} is the stub again; your version is in {}",
            shown(&checkout, &backup)
        ),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy the grader resets from is the committed stubs, byte for
    /// byte. A course author who changed a stub in `exercises/` copies it
    /// to `staff/grader/stubs/` too. (This holds in the lab as committed, as
    /// `.ci/stubs-must-fail` needs; a learner's own `exercises/` differ.)
    #[test]
    fn the_grader_resets_to_the_committed_stubs() {
        let root = crate::engine::checkout::repository();
        for (file, stub) in STUBS {
            let committed = std::fs::read_to_string(root.join(file)).unwrap();
            assert!(
                committed == *stub,
                "{file} differs from staff/grader/stubs/{}.stub: copy the stub there",
                &file["exercises/".len()..]
            );
        }
        // Every exercise file of every track has a stub.
        for track in lab_claims::Track::ALL {
            for (_, file) in crate::learner::reference::files(track) {
                assert!(stub(&file).is_some(), "no stub for {file}");
            }
        }
    }

    #[test]
    fn a_reset_keeps_the_learners_version_and_writes_the_stub() {
        let checkout = std::env::temp_dir().join(format!("grade-reset-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&checkout);
        std::fs::create_dir_all(checkout.join("exercises")).unwrap();
        let file = "exercises/apply.rs";
        let path = checkout.join(file);
        std::fs::write(&path, "mine, first").unwrap();
        assert_eq!(
            reset(&checkout, file).unwrap(),
            Done::Reset(checkout.join("exercises/apply.rs.bak"))
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), stub(file).unwrap());
        assert_eq!(
            std::fs::read_to_string(checkout.join("exercises/apply.rs.bak")).unwrap(),
            "mine, first"
        );
        // The stub again: nothing to do, no backup of the stub.
        assert_eq!(reset(&checkout, file).unwrap(), Done::AlreadyStub);
        // A second reset never overwrites the first backup.
        std::fs::write(&path, "mine, second").unwrap();
        assert_eq!(
            reset(&checkout, file).unwrap(),
            Done::Reset(checkout.join("exercises/apply.rs.bak.2"))
        );
        assert_eq!(
            std::fs::read_to_string(checkout.join("exercises/apply.rs.bak")).unwrap(),
            "mine, first"
        );
        let _ = std::fs::remove_dir_all(&checkout);
    }

    #[test]
    fn a_file_is_named_with_or_without_its_folder() {
        let root = crate::engine::checkout::repository();
        assert_eq!(
            exercise(&root, "exercises/apply.rs"),
            Ok("exercises/apply.rs")
        );
        assert_eq!(exercise(&root, "apply.rs"), Ok("exercises/apply.rs"));
        assert_eq!(
            exercise(&root, "./exercises/postgres/contract.sql"),
            Ok("exercises/postgres/contract.sql")
        );
        assert_eq!(
            exercise(
                &root,
                &root.join("exercises/etcd/worker.rs").to_string_lossy()
            ),
            Ok("exercises/etcd/worker.rs")
        );
        assert!(exercise(&root, "exercises/lib.rs").is_err());
    }
}
