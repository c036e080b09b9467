//! The scratch copy a class is built in: the lab's manifest, lock file,
//! library, tests and stubs, copied afresh for each submission, so that one
//! whose tests wrote into its copy cannot change the next one's. Only the
//! exercise files are then overwritten with the submission's.
//!
//! The reference's sources (`solutions/`) are not copied: a class is built
//! without the feature `solutions`, so nothing needs them, and a submission
//! cannot reach them from its copy. Of the other workspace members (the
//! grader, the reference, …) only the manifests come along, as cargo needs
//! them to read the workspace; their sources stay out.

use std::fs;
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// What the scratch copy takes from the lab's checkout; nothing else (not
/// `target/`, not `staff/class/`, not `solutions/`).
const REPOSITORY: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    ".cargo",
    "api",
    "staff/claims",
    "src",
    "tests/lab",
    "exercises",
];

/// The paths of the checkout a build of the suite reads: what the scratch
/// copy holds, and the workspace members' manifests. With `solutions`, the
/// reference too.
pub fn build_inputs(repository: &Path, solutions: bool) -> Vec<String> {
    let mut inputs: Vec<String> = REPOSITORY.iter().map(|&part| part.to_owned()).collect();
    if solutions {
        inputs.push("solutions".to_owned());
    }
    inputs.extend(
        members(repository)
            .into_iter()
            .map(|member| format!("{member}/Cargo.toml")),
    );
    inputs
}

/// The workspace members named in the root manifest (`members = [...]`),
/// without the root package itself.
pub fn members(repository: &Path) -> Vec<String> {
    let Ok(manifest) = fs::read_to_string(repository.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Some(start) = manifest.find("\nmembers") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let Some(list) = rest
        .find('[')
        .and_then(|open| Some((open, rest[open..].find(']')? + open)))
        .map(|(open, close)| &rest[open + 1..close])
    else {
        return Vec::new();
    };
    list.split(',')
        .map(|item| item.trim().trim_matches('"').to_owned())
        .filter(|member| !member.is_empty() && member != "." && !member.contains(".."))
        .collect()
}

/// Makes the scratch copy: the build inputs, replaced whole, next to the
/// target directory that is kept.
pub fn prepare(repository: &Path, scratch: &Path) -> Result<(), String> {
    let failed =
        |what: &Path, error: io::Error| format!("cannot prepare {}: {error}", what.display());
    fs::create_dir_all(scratch).map_err(|error| failed(scratch, error))?;
    // A scratch copy written by an older grader may hold more than this one
    // copies (its reference, a grader's sources): it goes whole.
    if let Ok(entries) = fs::read_dir(scratch) {
        for entry in entries.flatten() {
            let path = entry.path();
            let removed = if path.is_dir() && !path.is_symlink() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            removed.map_err(|error| failed(&path, error))?;
        }
    }
    for part in build_inputs(repository, false) {
        let (from, to) = (repository.join(&part), scratch.join(&part));
        if from.exists() {
            copy(&from, &to).map_err(|error| failed(&to, error))?;
        }
    }
    Ok(())
}

/// Copies a file or a folder, following symbolic links. A file keeps its
/// modification time: cargo then finds the lab's own crates (the claim
/// catalogue) as fresh as the last build left them, and rebuilds only what
/// the submission's files go into.
fn copy(from: &Path, to: &Path) -> io::Result<()> {
    if from.is_dir() {
        fs::create_dir_all(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(from, to)?;
        let modified = fs::metadata(from)?.modified()?;
        fs::File::options()
            .write(true)
            .open(to)?
            .set_modified(modified)
    }
}

/// Writes an exercise file into the scratch copy, dated a second ahead.
/// Cargo rebuilds a file newer than its last build; on a file system that
/// keeps whole seconds, a file written in the second of the previous build
/// would look old, and the previous submission's binary would be tested.
pub fn write_source(path: &Path, source: &[u8]) -> io::Result<()> {
    fs::write(path, source)?;
    let file = fs::File::options().write(true).open(path)?;
    file.set_modified(SystemTime::now() + Duration::from_secs(1))
}
