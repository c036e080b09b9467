//! What a path may name: the allowlist, the names that start a path at a
//! crate, and the prelude.

use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The allowlist's text.
pub(super) const ALLOWLIST: &str = include_str!("../../../allowlist.txt");

/// The allowlist, read once.
pub(super) struct Allowlist {
    pub(super) paths: Vec<Vec<String>>,
    pub(super) macros: BTreeSet<String>,
    pub(super) attributes: BTreeSet<String>,
}

pub(super) fn allowlist() -> &'static Allowlist {
    static LIST: OnceLock<Allowlist> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut list = Allowlist {
            paths: Vec::new(),
            macros: BTreeSet::new(),
            attributes: BTreeSet::new(),
        };
        for line in ALLOWLIST.lines() {
            let line = line.split('#').next().unwrap_or_default().trim();
            match line.split_once(' ') {
                Some(("path", path)) => list
                    .paths
                    .push(path.trim().split("::").map(str::to_owned).collect()),
                Some(("macro", name)) => {
                    list.macros.insert(name.trim().to_owned());
                }
                Some(("attribute", name)) => {
                    list.attributes.insert(name.trim().to_owned());
                }
                _ => {}
            }
        }
        list
    })
}

impl Allowlist {
    /// Whether `path` is an entry or lies under one.
    pub(super) fn allows(&self, path: &[String]) -> bool {
        self.paths
            .iter()
            .any(|entry| path.len() >= entry.len() && path[..entry.len()] == entry[..])
    }

    /// Whether `path` is a module on the way to an entry (`use std::cmp;`).
    pub(super) fn leads_to(&self, path: &[String]) -> bool {
        self.paths
            .iter()
            .any(|entry| entry.len() > path.len() && entry[..path.len()] == path[..])
    }
}

/// Names every Rust file may use without a path: primitives and the prelude.
pub(super) const PRELUDE: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "f32",
    "f64",
    "bool",
    "char",
    "str",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "ToString",
    "ToOwned",
    "Clone",
    "Copy",
    "Default",
    "Iterator",
    "IntoIterator",
    "Extend",
    "FromIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "TryFrom",
    "TryInto",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Self",
];

/// The crate roots that name the standard library.
pub(super) const STD_ROOTS: &[&str] = &["std", "core", "alloc"];

/// The crate roots the compiler brings without a dependency.
pub(super) const BUILTIN_ROOTS: &[&str] = &["std", "core", "alloc", "proc_macro", "test", "libc"];

/// The manifests of the learner's crate, of the API it depends on, of the
/// harness and of the programs that link them: the packages and their
/// direct dependencies, read for their names.
pub(super) const MANIFESTS: [&str; 4] = [
    include_str!("../../../../../exercises/Cargo.toml"),
    include_str!("../../../../../api/Cargo.toml"),
    include_str!("../../../../../src/Cargo.toml"),
    include_str!("../../../../../Cargo.toml"),
];

/// Every name a path can start with to mean a crate: the built-in roots,
/// the lab's own packages and each one's direct dependencies, `-` read as
/// `_`. The learner's crate reaches only `std`, `core`, `alloc` and the
/// API by name; the rest are the crates of the process it runs in. Not the
/// whole lock file: its transitive graph spells ordinary words (`log`,
/// `bytes`, `http`) that honest code names its own things.
pub(super) fn crate_roots() -> &'static BTreeSet<String> {
    static ROOTS: OnceLock<BTreeSet<String>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots: BTreeSet<String> =
            BUILTIN_ROOTS.iter().map(|&root| root.to_owned()).collect();
        for manifest in MANIFESTS {
            roots.extend(manifest_crates(manifest));
        }
        roots
    })
}

/// A manifest's package name and the names of its dependencies (every
/// `…dependencies` table), as Rust spells them.
pub(super) fn manifest_crates(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut section = "";
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let name = match (section, key) {
            ("[package]", "name") => value.trim().trim_matches('"'),
            _ if section.ends_with("dependencies]") => key,
            _ => continue,
        };
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            names.push(name.replace('-', "_"));
        }
    }
    names
}

/// Whether `name` is spelled like a crate root.
pub(super) fn is_crate_root(name: &str) -> bool {
    crate_roots().contains(name)
}
