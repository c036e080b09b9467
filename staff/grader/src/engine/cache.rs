//! The dependency cache: the lab's dependencies, built once per machine and
//! kept under the checkout's `target/grade-cache/KEY/`, so that a class
//! graded into a new output folder does not pay the cold build again.
//!
//! The key is a hash of what decides the dependency build: the lab's
//! `Cargo.lock`, its manifests and `.cargo/config.toml`, the features graded
//! (the tracks) and the toolchain (`rustc -vV`, `cargo -V`). A lab or a
//! toolchain that changes gets a new key, and so a new cache.
//!
//! Only the grader fills the cache, from the untouched lab (its stubs), never
//! from a submission; the build goes through the sandbox like a class's, so
//! its environment, and with it cargo's fingerprints, are the same. Then the
//! grader takes the folder back from the sandbox's account: from then on it
//! is the grader's own, and no sandbox ever shows it (it lies in the lab's
//! checkout, which every sandbox hides). A class's workers each build in a
//! copy of it (`seed`), under the output folder's `.work/`: what one
//! submission's build may leave in its copy can reach the next submissions
//! of that worker at most, never the cache or another class.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::engine::sandbox;
use crate::engine::suite::{Built, Suite};

/// Bumped when what the cache holds, or how, changes.
const FORMAT: &str = "fencing-lab grade-cache 2";

/// The file that marks a complete cache, and a seeded copy, with its key.
const STAMP: &str = ".grade-cache-key";

/// The file that says which tracks a cache was built for.
const FEATURES: &str = ".grade-cache-features";

/// Where the caches go: `target/grade-cache/` of the lab's checkout, as
/// its real path where it is a link (a copy of the lab that shares a
/// checkout's caches): a sandbox shows real paths only.
pub fn root(repository: &Path) -> PathBuf {
    let root = repository.join("target").join("grade-cache");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// The cache's key for building the lab in `repository` with `features`.
pub fn key(repository: &Path, features: &str) -> Result<String, String> {
    let mut hash = Fnv::new();
    hash.add(FORMAT.as_bytes());
    hash.add(features.as_bytes());
    for file in ["Cargo.lock", "Cargo.toml", ".cargo/config.toml"] {
        hash.add(file.as_bytes());
        // A missing file hashes as empty: its absence is part of the key.
        hash.add(&fs::read(repository.join(file)).unwrap_or_default());
    }
    for member in crate::engine::scratch::members(repository) {
        hash.add(&fs::read(repository.join(member).join("Cargo.toml")).unwrap_or_default());
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    for (program, arg) in [(rustc, "-vV"), (crate::engine::suite::cargo(), "-V")] {
        let output = Command::new(&program)
            .arg(arg)
            .current_dir(repository)
            .output()
            .map_err(|error| format!("cannot run {}: {error}", program.to_string_lossy()))?;
        hash.add(&output.stdout);
    }
    Ok(format!("{:016x}", hash.0))
}

/// The complete cache for `key`, filled now (by building the untouched lab
/// with `template`'s sandbox, features and limits) when there is none yet.
///
/// A fill starts from the first complete cache among `bases` (the keys of
/// the same lab with fewer tracks, best first), so that the dependencies
/// every track shares (SQLite's C library above all) are built once per
/// machine, not once per track: cargo rebuilds only what the new features
/// change. A base is another build of the untouched lab, never a
/// submission's.
pub fn ensure(
    repository: &Path,
    template: &Suite,
    key: &str,
    features: &str,
    bases: &[String],
) -> Result<PathBuf, String> {
    let root = root(repository);
    let dir = root.join(key);
    if stamp_of(&dir).as_deref() == Some(key) {
        return Ok(dir);
    }
    let fill = root.join(format!(".fill-{key}-{}", std::process::id()));
    let (scratch, target) = (fill.join("repository"), fill.join("target"));
    let _ = fs::remove_dir_all(&fill);
    fs::create_dir_all(&scratch)
        .map_err(|error| format!("cannot create {}: {error}", scratch.display()))?;
    let base = bases.iter().map(|base| root.join(base)).find(|dir| {
        dir.file_name()
            .and_then(|name| name.to_str())
            .map(str::to_owned)
            == stamp_of(dir)
    });
    match base {
        Some(base) => copy(&base, &target)?,
        None => fs::create_dir_all(&target)
            .map_err(|error| format!("cannot create {}: {error}", target.display()))?,
    }
    crate::engine::scratch::prepare(repository, &scratch)?;
    let mut suite = Suite {
        dir: scratch.clone(),
        target_dir: target.clone(),
        ..template.clone()
    };
    if let Some(sandbox) = suite.sandbox.as_mut() {
        sandbox::hand_over(sandbox.worker, &[&target])?;
        sandbox.readable = vec![sandbox::real(&scratch)?];
    }
    let built = suite.build();
    let removed = fs::remove_dir_all(&scratch);
    match built? {
        Built::Executable { .. } => {}
        Built::CompileError(error) => {
            return Err(format!(
                "the untouched lab does not compile, so no dependency cache: {error}"
            ));
        }
        Built::TimedOut(limit) => {
            return Err(format!(
                "building the dependency cache took longer than {} s (--build-timeout)",
                limit.as_secs()
            ));
        }
        Built::Failed(reason) => return Err(format!("cannot build the lab's suite: {reason}")),
    }
    removed.map_err(|error| format!("cannot remove {}: {error}", scratch.display()))?;
    sandbox::reclaim(&target)?;
    for (file, text) in [(FEATURES, features), (STAMP, key)] {
        fs::write(target.join(file), text)
            .map_err(|error| format!("cannot write {}: {error}", target.join(file).display()))?;
    }
    // Another grade may have filled the same key meanwhile: either is good.
    if fs::rename(&target, &dir).is_err() && stamp_of(&dir).as_deref() != Some(key) {
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&target, &dir)
            .map_err(|error| format!("cannot move the cache to {}: {error}", dir.display()))?;
    }
    let _ = fs::remove_dir_all(&fill);
    // The caches of the same tracks for an older lock file or toolchain are
    // of no more use; another track's stays.
    if let Ok(entries) = fs::read_dir(&root) {
        for entry in entries.flatten() {
            let path = entry.path();
            let same_tracks = fs::read_to_string(path.join(FEATURES)).is_ok_and(|f| f == features);
            if path != dir && stamp_of(&path).is_some() && same_tracks {
                let _ = fs::remove_dir_all(&path);
            }
        }
    }
    Ok(dir)
}

/// Makes `target` a copy of the cache `dir` (times kept, so cargo finds
/// every dependency fresh), unless it is one of that key already: a worker's
/// target directory from an earlier run into the same output folder is
/// warm as it is. Returns whether it copied.
pub fn seed(dir: &Path, key: &str, target: &Path) -> Result<bool, String> {
    if stamp_of(target).as_deref() == Some(key) {
        return Ok(false);
    }
    if target.exists() {
        fs::remove_dir_all(target)
            .map_err(|error| format!("cannot remove {}: {error}", target.display()))?;
    }
    copy(dir, target)?;
    Ok(true)
}

/// Copies the cache `dir` to `target`, which must not exist, with the
/// times kept, so cargo finds every dependency fresh.
fn copy(dir: &Path, target: &Path) -> Result<(), String> {
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    // `cp -a` keeps the times; a copy by hand would have to set each.
    let status = Command::new("cp")
        .arg("-a")
        .arg("--")
        .arg(dir)
        .arg(target)
        .status()
        .map_err(|error| format!("cannot run cp: {error}"))?;
    if !status.success() {
        return Err(format!(
            "cannot copy the dependency cache {} to {}: cp exited with {status}",
            dir.display(),
            target.display()
        ));
    }
    Ok(())
}

/// The key a cache or a seeded target directory was made for.
fn stamp_of(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join(STAMP)).ok()
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike the standard
/// library's hasher; a cache key needs no more.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Adds `bytes`, with their length first, so that no two sequences of
    /// parts hash as one.
    fn add(&mut self, bytes: &[u8]) {
        for &byte in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv_1a_and_parts_do_not_run_together() {
        let mut a = Fnv::new();
        a.add(b"ab");
        a.add(b"c");
        let mut b = Fnv::new();
        b.add(b"a");
        b.add(b"bc");
        assert_ne!(a.0, b.0);
        let mut c = Fnv::new();
        c.add(b"ab");
        c.add(b"c");
        assert_eq!(a.0, c.0);
    }
}
