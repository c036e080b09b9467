//! Reading a submission: which folders of the class are submissions, which
//! exercise files each one brings, and what else it holds (named in its
//! report, never used). A submission's files are read here, not executed.
//!
//! A submission holds `exercises/apply.rs` and
//! `exercises/install_generation.rs`, or the files alone; with the
//! PostgreSQL track graded, `exercises/postgres/…` (or `postgres/…` beside
//! the files alone) too; with the etcd track graded, `exercises/etcd/worker.rs`
//! (or `etcd/worker.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::engine::score::Tracks;
use lab_claims::{CLAIMS, Track};

/// The largest exercise file read; the reference is a few kilobytes.
const MAX_SOURCE: u64 = 256 * 1024;

/// The exercise files of the graded tracks, from the claim catalogue, each
/// once, track by track: `exercises/apply.rs`, …, then
/// `exercises/postgres/apply.rs`, … when PostgreSQL is graded, then
/// `exercises/etcd/worker.rs` when etcd is.
pub fn exercise_files(tracks: Tracks) -> Vec<(Track, String)> {
    tracks
        .list()
        .iter()
        .flat_map(|&track| {
            let files: BTreeSet<String> = CLAIMS
                .iter()
                .filter(|claim| claim.on(track))
                .flat_map(|claim| claim.files.iter().map(|file| track.exercise_file(file)))
                .collect();
            files.into_iter().map(move |file| (track, file))
        })
        .collect()
}

/// Where a submission holding the files alone keeps an exercise file: its
/// path without `exercises/` (`apply.rs`, `postgres/apply.rs`).
fn alone(file: &str) -> &str {
    file.strip_prefix("exercises/").unwrap_or(file)
}

/// The names of the class's outputs beside the submissions' folders in the
/// output folder: a submission of one of these names would collide.
pub const OUTPUT_NAMES: &[&str] = &[
    "gradebook.csv",
    "index.html",
    "class.json",
    // The class report's page by points and its claims' folder
    // (`instructor::html`, whose tests hold the two names to these).
    "by-points.html",
    "claims",
];

/// The class as found: the submissions, by name, and the folders refused
/// alone, each with the reason.
#[derive(Debug, Default)]
pub struct Found {
    /// The folders graded, sorted.
    pub names: Vec<String>,
    /// Folders not graded: the name as it can be shown, and why.
    pub refused: Vec<(String, String)>,
}

/// The submissions: the folders of `dir`, by name, without hidden ones and
/// without the output folder if it sits inside. A folder whose name the
/// grader cannot use (not UTF-8, a control character, the name of one of
/// the class's outputs) is refused alone; the others are graded.
pub fn list(dir: &Path, out: &Path) -> Result<Found, String> {
    let entries =
        fs::read_dir(dir).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    let out = fs::canonicalize(out).ok();
    let mut found = Found::default();
    for entry in entries {
        let entry = entry.map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        if out.is_some() && fs::canonicalize(&path).ok() == out {
            continue;
        }
        let shown = format!("{:?}", entry.file_name());
        if entry.file_name().to_str().is_none() {
            found.refused.push((
                shown,
                "its name is not UTF-8, so no report could name it; rename it".to_owned(),
            ));
        } else if name.chars().any(char::is_control) {
            found.refused.push((
                shown,
                "its name holds a control character; rename it".to_owned(),
            ));
        } else if OUTPUT_NAMES.contains(&name.to_lowercase().as_str()) {
            found.refused.push((
                shown,
                format!(
                    "the class's {name} goes beside the submissions' results in the output \
                     folder, so a submission cannot have that name; rename it"
                ),
            ));
        } else {
            found.names.push(name);
        }
    }
    found.names.sort();
    found.refused.sort();
    Ok(found)
}

/// The note a link out of the submissions folder gets: the path it leads to
/// is named only when it lies in the lab's checkout `lab`, never the host's.
const LINK_OUT: &str = "a link out of the submissions folder, not followed";

/// Whether `path`, after every link, lies in one of `allowed`.
fn inside(path: &Path, allowed: &[PathBuf]) -> bool {
    fs::canonicalize(path).is_ok_and(|real| allowed.iter().any(|root| real.starts_with(root)))
}

/// `real`, as a note names a link's target out of the submissions folder:
/// `" (path)"` in the lab's checkout `lab`, else nothing.
fn named_if_in_lab(real: &Path, lab: &Path) -> String {
    if real.starts_with(lab) {
        format!(" ({})", real.display())
    } else {
        String::new()
    }
}

/// A note for a submission whose folder is a symbolic link: where it
/// leads, and which other submission of the class it is, if any. A link
/// out of `allowed` is said to be one, and named only in the lab `lab`.
pub fn link_note(
    dir: &Path,
    name: &str,
    class: &[String],
    allowed: &[PathBuf],
    lab: &Path,
) -> Option<String> {
    let folder = dir.join(name);
    if !fs::symlink_metadata(&folder).ok()?.file_type().is_symlink() {
        return None;
    }
    let target = fs::canonicalize(&folder).ok()?;
    if !inside(&folder, allowed) {
        return Some(format!(
            "its folder is {LINK_OUT}{}",
            named_if_in_lab(&target, lab)
        ));
    }
    let same: Vec<&str> = class
        .iter()
        .filter(|other| *other != name)
        .filter(|other| {
            let other = dir.join(other);
            !fs::symlink_metadata(&other).is_ok_and(|meta| meta.file_type().is_symlink())
                && fs::canonicalize(&other).ok().as_ref() == Some(&target)
        })
        .map(String::as_str)
        .collect();
    Some(if same.is_empty() {
        format!("its folder is a link to {}", target.display())
    } else {
        format!(
            "its folder is a link to {}, the folder of the submission {}: the same files, \
             graded twice",
            target.display(),
            same.join(", ")
        )
    })
}

/// The classmates whose folders the submission's exercise files lead into
/// (through its folder, its `exercises/` or a file that is a link): the
/// same files as theirs, under another name. A classmate whose folder is
/// itself a link is none: the class's own links (`reference`, `stubs` in
/// the lab's `staff/class`) lead into the lab, not into a submission.
pub fn classmates_behind(dir: &Path, name: &str, class: &[String], tracks: Tracks) -> Vec<String> {
    let folder = dir.join(name);
    let reals: Vec<PathBuf> = exercise_files(tracks)
        .iter()
        .filter_map(|(_, file)| {
            [folder.join(file), folder.join(alone(file))]
                .into_iter()
                .find_map(|path| fs::canonicalize(path).ok())
        })
        .collect();
    class
        .iter()
        .filter(|other| *other != name)
        .filter(|other| {
            let other = dir.join(other);
            !fs::symlink_metadata(&other).is_ok_and(|meta| meta.file_type().is_symlink())
                && fs::canonicalize(&other)
                    .is_ok_and(|theirs| reals.iter().any(|real| real.starts_with(&theirs)))
        })
        .cloned()
        .collect()
}

/// An exercise file of the submission: `exercises/apply.rs`, else
/// `apply.rs` (`exercises/postgres/apply.rs`, else `postgres/apply.rs`);
/// `None` when it has neither. A symbolic link is followed only
/// within `allowed`, so a submission cannot make the grader read, and quote
/// in a compiler error, any other file; a link out of the submission's own
/// folder is worth a note. Past `allowed`, a path is named only in the lab
/// `lab`.
pub fn read(
    folder: &Path,
    file: &str,
    (allowed, lab): (&[PathBuf], &Path),
    notes: &mut Vec<String>,
) -> Result<Option<Vec<u8>>, String> {
    if !inside(folder, allowed) {
        return Err("its folder is a link out of the submissions folder; not read".to_owned());
    }
    let Some(path) = [folder.join(file), folder.join(alone(file))]
        .into_iter()
        .find(|path| fs::symlink_metadata(path).is_ok())
    else {
        return Ok(None);
    };
    let shown = path
        .strip_prefix(folder)
        .unwrap_or(&path)
        .display()
        .to_string();
    let real = fs::canonicalize(&path).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !allowed.iter().any(|root| real.starts_with(root)) {
        return Err(format!(
            "{shown} is a link out of the submissions folder{}; not read",
            named_if_in_lab(&real, lab)
        ));
    }
    if fs::canonicalize(folder).is_ok_and(|own| !real.starts_with(own)) {
        notes.push(format!(
            "{shown} is a link out of this submission, to {}",
            real.display()
        ));
    }
    let metadata = fs::metadata(&real).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if metadata.len() > MAX_SOURCE {
        return Err(format!(
            "{shown} is {} bytes; an exercise file is a few kilobytes (at most {MAX_SOURCE})",
            metadata.len()
        ));
    }
    fs::read(&real)
        .map(Some)
        .map_err(|error| format!("cannot read {shown}: {error}"))
}

/// The submission's entries that are not exercise files, for the report.
/// The folders that may hold exercise files (`exercises/`, and with the
/// PostgreSQL track `postgres/` and `exercises/postgres/`, with the etcd
/// track `etcd/` and `exercises/etcd/`) are looked into, unless they lead
/// out of `allowed`: their entries could be the host's.
pub fn ignored_entries(folder: &Path, tracks: Tracks, allowed: &[PathBuf]) -> Vec<String> {
    let files = exercise_files(tracks);
    let graded_names: BTreeSet<&str> = files
        .iter()
        .flat_map(|(_, file)| [file.as_str(), alone(file)])
        .collect();
    // "", "exercises/", "postgres/", "exercises/postgres/".
    let folders: BTreeSet<&str> = graded_names
        .iter()
        .map(|name| name.rfind('/').map_or("", |slash| &name[..=slash]))
        .collect();
    let mut ignored = Vec::new();
    let mut look = |dir: &Path, prefix: &str| {
        if !inside(dir, allowed) {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            if name.starts_with('.') || graded_names.contains(relative.as_str()) {
                continue;
            }
            let is_dir = entry.path().is_dir();
            if is_dir && folders.contains(format!("{relative}/").as_str()) {
                if !inside(&entry.path(), allowed) {
                    ignored.push(format!("{relative}/ ({LINK_OUT})"));
                }
                continue;
            }
            let slash = if is_dir { "/" } else { "" };
            ignored.push(format!("{relative}{slash}"));
        }
    };
    for prefix in &folders {
        look(&folder.join(prefix), prefix);
    }
    ignored.sort();
    if ignored.len() > 10 {
        let more = ignored.len() - 8;
        ignored.truncate(8);
        ignored.push(format!("and {more} more"));
    }
    ignored
}
