//! The review of a submission's source, before it is built: every path,
//! macro and attribute an exercise file names is held against the allowlist
//! (`staff/grader/allowlist.txt`, compiled in). Anything outside it puts the
//! submission on hold: it is graded, but its points stay out of the total
//! until an instructor accepts it (`--accept NAME`), and the report quotes
//! each offending line.
//!
//! The file is read with a real Rust parser (`syn`). `use` declarations are
//! followed, renames included (`use std::{fs as f}` makes `f::read` a
//! `std::fs::read`), and so are the macros the file defines: a
//! `macro_rules!` body, like every macro's arguments, is read token by
//! token, so a path it spells (`std::fs::read`), a path it builds from one
//! of its variables after a crate root (`std::$m::read`) and a bare crate
//! root handed to it are all seen. `unsafe`, `extern` and `mod name;` are
//! always held.
//!
//! No local name shadows a crate root. A name the file declares (an item at
//! any depth, a generic parameter, a binding, a field, a variant, a label, a
//! macro, an import's or an extern crate's new name) spelled like a crate
//! the lab could reach (`std`, `core`, `alloc`, `proc_macro`, `test`, or any
//! package in `Cargo.lock`, `-` read as `_`) is itself held, and a path that
//! starts with such a name is read as the crate's: rustc reads it so too
//! when the local is a value (`fn std() {}` leaves `std::fs::read` the
//! crate's). Any other name the file declares is its own, and a path
//! starting with it is not held, unless it goes on through a name an import
//! binds (`mod m { pub use std as s; }` makes `m::s::fs` a `std::fs`).
//!
//! The review is the defence against code in the test process itself: the
//! sandbox keeps a submission from the rest of the machine, but not from
//! the memory of the process it runs in, where the verdict channel's key
//! lives.
//!
//! The parts: `roots`, what a path may name (the allowlist, the crate
//! roots, the prelude); `declared`, the names a file declares or imports;
//! `visitor`, the walk that holds what the allowlist does not allow.

mod declared;
mod roots;
mod visitor;

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;

use declared::Declared;
#[cfg(test)]
use roots::is_crate_root;
use visitor::Review;

/// The most lines one submission lists; past that, the point is made.
const MAX_FLAGS: usize = 40;

/// One held line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The exercise file, as `exercises/apply.rs`.
    pub file: String,
    /// Its line number, from 1.
    pub line: usize,
    /// What it names that the allowlist does not have.
    pub what: String,
    /// The line itself, trimmed and shortened.
    pub text: String,
}

impl std::fmt::Display for Flag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.what, self.text
        )
    }
}

/// Reviews one exercise file, named as in the lab (`exercises/apply.rs`,
/// `exercises/postgres/apply.rs`, …): the name tells where it sits in the
/// lab's crate, which `super::` leads to.
///
/// An SQL file (`exercises/postgres/contract.sql`) is not Rust and is not
/// read here: it never runs in the test process, only in the PostgreSQL
/// server, as a role that owns the lab's tables and nothing else, and the
/// lab checks the schema it leaves (`src/pg/contract.rs`).
pub fn scan(file: &str, source: &str) -> Vec<Flag> {
    if file.ends_with(".sql") {
        return Vec::new();
    }
    let lines: Vec<&str> = source.lines().collect();
    let mut review = Review {
        lines: &lines,
        module: module_of(file),
        aliases: BTreeMap::new(),
        locals: BTreeSet::new(),
        macros: BTreeSet::new(),
        found: BTreeMap::new(),
    };
    match syn::parse_file(source) {
        Ok(parsed) => {
            let mut names = Declared::default();
            names.visit_file(&parsed);
            review.aliases = names.aliases;
            review.locals = names.locals;
            review.macros = names.macros;
            for (span, what) in names.shadows {
                review.hold(span, what);
            }
            review.visit_file(&parsed);
        }
        Err(error) => {
            // The compiler will say what is wrong; the review cannot read it.
            review.hold(error.span(), format!("cannot be read: {error}"));
        }
    }
    review
        .found
        .into_iter()
        .take(MAX_FLAGS)
        .map(|((line, what), text)| Flag {
            file: file.to_owned(),
            line,
            what,
            text,
        })
        .collect()
}

/// The module an exercise file is compiled as a child of.
fn module_of(file: &str) -> Vec<String> {
    let mut module = vec!["crate".to_owned()];
    if file.contains("postgres/") {
        module.push("pg".to_owned());
    } else if file.contains("etcd/") {
        module.push("etcd".to_owned());
    }
    module
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(source: &str) -> Vec<String> {
        scan("exercises/apply.rs", source)
            .into_iter()
            .map(|flag| flag.what)
            .collect()
    }

    #[test]
    fn honest_code_is_not_held() {
        let source = "
            use crate::TransactionBehavior;
            use crate::sql::{OptionalExtension, params};
            use std::cmp::Ordering;
            use crate::{Destination, LabError, Outcome, Record};
            #[derive(Debug, Clone)]
            struct Local { a: i64 }
            /// Docs.
            pub fn apply(db: &mut Destination) -> Result<Outcome, LabError> {
                let mut tries = 0;
                loop {
                    tries += 1;
                    if tries > 3 { break; }
                    std::thread::sleep(std::time::Duration::from_millis(5 * tries));
                }
                let v: Vec<i64> = vec![1, 2];
                let m = std::collections::BTreeMap::<String, i64>::new();
                match 1.cmp(&2) { Ordering::Less => {}, _ => {} }
                println!(\"{:?} {}\", v, i64::MAX);
                let _ = (m, Local { a: 1 }, params![1]);
                todo!()
            }
        ";
        assert_eq!(held(source), Vec::<String>::new());
    }

    #[test]
    fn the_postgresql_api_for_own_sql_is_not_held() {
        // What a PostgreSQL apply needs to read a row of its own SQL and
        // the SQLSTATE of a statement the server refused.
        let source = "
            use crate::pg::sql::{Error, SqlState};
            use crate::pg::{PgDestination, PgTx};
            fn refused(error: &Error) -> bool {
                error.code() == Some(&SqlState::UNIQUE_VIOLATION)
            }
            fn first(row: &crate::pg::sql::Row) -> i64 { row.get(0) }
            fn param(value: &i64) -> &(dyn crate::pg::sql::ToSql + Sync) { value }
        ";
        let flags = scan("exercises/postgres/apply.rs", source);
        assert_eq!(flags, Vec::new());
        // The client's own crate stays another crate's path.
        assert!(!held("use postgres::error::SqlState;").is_empty());
    }

    #[test]
    fn renames_and_groups_are_followed() {
        assert!(!held("use std::{fs as f}; fn a() { f::read(\"x\"); }").is_empty());
        assert!(!held("use rustix::{fs as rf, process as rp};").is_empty());
        let renamed = held("use std as s; fn a() { let _ = s::fs::read(\"x\"); }");
        assert_eq!(renamed.len(), 1, "{renamed:?}");
        assert!(renamed[0].contains("std::fs::read"));
    }

    #[test]
    fn macros_are_read_token_by_token() {
        let built = "macro_rules! r { ($a:ident) => { std::$a::read_to_string(\"/x\") } }
                     fn a() { let _ = r!(fs); }";
        assert!(held(built).iter().any(|what| what.contains("builds")));
        assert!(!held("fn a() { println!(\"{:?}\", std::fs::read(\"x\")); }").is_empty());
        assert!(!held("fn a() { let _ = include_str!(\"/etc/passwd\"); }").is_empty());
        assert!(!held("fn a() { let _ = option_env!(\"HOME\"); }").is_empty());
        assert!(!held("macro_rules! m { ($k:ident) => { $k::fs::read(\"x\") } }").is_empty());
    }

    #[test]
    fn attributes_and_keywords_are_held() {
        assert!(!held("#[path = \"/x/apply.rs\"] mod a;").is_empty());
        assert!(!held("#[cfg_attr(all(), path = \"/x/apply.rs\")] mod a {}").is_empty());
        assert!(!held("#[unsafe(no_mangle)] fn a() {}").is_empty());
        assert!(!held("#[used] static A: u8 = 0;").is_empty());
        assert!(!held("fn a() { unsafe { } }").is_empty());
        assert!(!held("unsafe extern \"C\" { fn f(); }").is_empty());
        assert!(!held("fn a() { core::arch::asm!(\"nop\"); }").is_empty());
        assert!(!held("#[link_section = \".init_array\"] static A: u8 = 0;").is_empty());
    }

    /// Every committed exercise file, reference, stub, mutant or alternative,
    /// of every class: honest code, so a hold on any is a defect.
    #[test]
    fn no_committed_submission_is_held() {
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        let mut stack = vec![lab.join("solutions"), lab.join("exercises")];
        for entry in std::fs::read_dir(lab.join("staff"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.file_name().to_string_lossy().starts_with("class") {
                stack.push(entry.path());
            }
        }
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs")
                    // The learner's crate root is the lab's, never a
                    // submission's: the grader takes exercise files only.
                    && path.file_name().is_some_and(|name| name != "lib.rs")
                {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 50, "found only {} files", files.len());
        let mut held = Vec::new();
        for path in &files {
            let source = std::fs::read_to_string(path).unwrap_or_default();
            let shown = path
                .strip_prefix(&lab)
                .unwrap_or(path)
                .display()
                .to_string();
            held.extend(
                scan(&shown, &source)
                    .into_iter()
                    .map(|flag| flag.to_string()),
            );
        }
        assert!(held.is_empty(), "held:\n{}", held.join("\n"));
    }

    /// The corpus of evasions by a name: a local declaration spelled like a
    /// crate root, or a path that goes around the review through one. It
    /// grows with every new evasion form found; each case is one form, a
    /// whole file, and what its review must hold (every part of it).
    const NAME_EVASIONS: &[(&str, &[&str])] = &[
        // A function: the value namespace, so `std::` is still the crate.
        (
            "fn std() {} fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a function named like the crate `std`", "`std::fs::read`"],
        ),
        // A constant, shadowing another crate of the graph.
        (
            "const rustix: u8 = 0; fn a() { let _ = rustix::process::getpid(); }",
            &[
                "a constant named like the crate `rustix`",
                "`rustix::process::getpid`",
            ],
        ),
        // A static.
        (
            "static std: u8 = 0; fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a static named like the crate `std`", "`std::fs::read`"],
        ),
        // A module.
        (
            "mod std {} fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a module named like the crate `std`", "`std::fs::read`"],
        ),
        // A struct.
        (
            "struct std; fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a struct named like the crate `std`", "`std::fs::read`"],
        ),
        // An enum.
        (
            "enum std {} fn a() { let _ = std::fs::read(\"/x\"); }",
            &["an enum named like the crate `std`", "`std::fs::read`"],
        ),
        // A union.
        (
            "union std { a: u8 } fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a union named like the crate `std`", "`std::fs::read`"],
        ),
        // A trait.
        (
            "trait std {} fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a trait named like the crate `std`", "`std::fs::read`"],
        ),
        // A type alias.
        (
            "type std = u8; fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a type alias named like the crate `std`", "`std::fs::read`"],
        ),
        // A generic type parameter.
        (
            "fn a<std>() { let _ = std::fs::read(\"/x\"); }",
            &[
                "a generic parameter named like the crate `std`",
                "`std::fs::read`",
            ],
        ),
        // A const generic parameter.
        (
            "fn a<const std: usize>() { let _ = std::fs::read(\"/x\"); }",
            &[
                "a const parameter named like the crate `std`",
                "`std::fs::read`",
            ],
        ),
        // A lifetime parameter.
        (
            "fn a<'std>(x: &'std str) -> &'std str { x }",
            &["a lifetime named like the crate `std`"],
        ),
        // A pattern binding.
        (
            "fn a() { let std = 1; let _ = (std, std::fs::read(\"/x\")); }",
            &["a binding named like the crate `std`", "`std::fs::read`"],
        ),
        // A closure's parameter.
        (
            "fn a() { let f = |std: u8| std::fs::read(\"/x\"); }",
            &["a binding named like the crate `std`", "`std::fs::read`"],
        ),
        // A function's parameter.
        (
            "fn a(tokio: u8) { let _ = tokio::fs::read(\"/x\"); }",
            &[
                "a binding named like the crate `tokio`",
                "`tokio::fs::read`",
            ],
        ),
        // A turbofish: a generic argument is a path of its own.
        (
            "fn std() {} fn f<T>() {} fn a() { f::<std::fs::File>(); }",
            &["a function named like the crate `std`", "`std::fs::File`"],
        ),
        // `impl … for std`: a local type to hang methods on.
        (
            "struct std; trait T {} impl T for std {} \
             fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a struct named like the crate `std`", "`std::fs::read`"],
        ),
        // `where std: …`: the parameter a bound names.
        (
            "fn a<std>() where std: Copy { let _ = std::fs::read(\"/x\"); }",
            &[
                "a generic parameter named like the crate `std`",
                "`std::fs::read`",
            ],
        ),
        // Raw identifiers, in the declaration and in the path.
        (
            "fn r#std() {} fn a() { let _ = r#std::fs::read(\"/x\"); }",
            &["a function named like the crate `std`", "`std::fs::read`"],
        ),
        // A leading `::`: the crate, whatever the file declares.
        (
            "fn std() {} fn a() { let _ = ::std::fs::read(\"/x\"); }",
            &["a function named like the crate `std`", "`std::fs::read`"],
        ),
        // `self::`: the file's own item, read as the crate's.
        (
            "fn std() {} fn a() { let _ = self::std::fs::read(\"/x\"); }",
            &["a function named like the crate `std`", "`std::fs::read`"],
        ),
        // A `macro_rules!` body that names the crate after a local `fn std`.
        (
            "fn std() {} macro_rules! m { () => { std::fs::read(\"/x\") } } \
             fn a() { let _ = m!(); }",
            &["a function named like the crate `std`", "`std::fs::read`"],
        ),
        // `$crate` inside a `macro_rules!`: the lab's crate, held to its list.
        (
            "fn std() {} macro_rules! m { () => { $crate::apply::std::fs::read(\"/x\") } } \
             fn a() { let _ = m!(); }",
            &[
                "a function named like the crate `std`",
                "`crate::apply::std::fs::read`",
            ],
        ),
        // `use … as std`: an allowed macro renamed, so `std::` went through it.
        (
            "use rusqlite::params as std; fn a() { let _ = std::fs::read(\"/x\"); }",
            &["an import named like the crate `std`", "`std::fs::read`"],
        ),
        // `extern crate … as std`.
        (
            "extern crate core as std; fn a() { let _ = std::fs::read(\"/x\"); }",
            &[
                "an extern crate",
                "an extern crate named like the crate `std`",
                "`std::fs::read`",
            ],
        ),
        // A nested module's item.
        (
            "mod m { struct std; } fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a struct named like the crate `std`", "`std::fs::read`"],
        ),
        // A method and an associated constant and type.
        (
            "struct S; impl S { fn libc() {} const std: u8 = 0; } \
             trait T { type tempfile; } fn a() { let _ = libc::getpid(); }",
            &[
                "a function named like the crate `libc`",
                "an associated constant named like the crate `std`",
                "an associated type named like the crate `tempfile`",
                "`libc::getpid`",
            ],
        ),
        // A `macro_rules!` name.
        (
            "macro_rules! std { () => {} } fn a() { let _ = std::fs::read(\"/x\"); }",
            &["a macro named like the crate `std`", "`std::fs::read`"],
        ),
        // A field, an enum variant and a label.
        (
            "struct S { std: u8 } enum E { core } \
             fn a() { 'alloc: loop { break 'alloc; } let _ = std::fs::read(\"/x\"); }",
            &[
                "a field named like the crate `std`",
                "an enum variant named like the crate `core`",
                "a label named like the crate `alloc`",
                "`std::fs::read`",
            ],
        ),
        // The lab's own crates, and the API the learner's crate depends on.
        (
            "fn lab_claims() {} struct fencing_lab; enum etcd_client {} type fencing_lab_api = u8;",
            &[
                "a function named like the crate `lab_claims`",
                "a struct named like the crate `fencing_lab`",
                "an enum named like the crate `etcd_client`",
                "a type alias named like the crate `fencing_lab_api`",
            ],
        ),
        // A crate re-exported by a local module, reached through the module.
        (
            "mod m { pub use std as s; } fn a() { let _ = m::s::fs::read(\"/x\"); }",
            &["`std::fs::read`"],
        ),
        // The same, the module's import handed to a macro that builds the
        // path from it.
        (
            "mod m { pub use std as s; } \
             macro_rules! r { ($k:ident) => { m::$k::fs::read(\"/x\") } } \
             fn a() { let _ = r!(s); }",
            &["a path a macro builds: `m::$k::fs::read`"],
        ),
        // The same, imported into the file by a glob through `self::`.
        (
            "mod m { pub use std as s; } use self::m::s::fs::*; \
             fn a() { let _ = read(\"/x\"); }",
            &["`std::fs::*`"],
        ),
    ];

    #[test]
    fn no_local_name_shadows_a_crate_root() {
        let mut missed = Vec::new();
        for (source, wanted) in NAME_EVASIONS {
            let found = held(source);
            for want in *wanted {
                if !found.iter().any(|what| what.contains(want)) {
                    missed.push(format!("{source}\n  lacks {want:?}; held: {found:?}"));
                }
            }
        }
        assert!(missed.is_empty(), "{}", missed.join("\n"));
    }

    #[test]
    fn names_near_a_crate_root_are_not_held() {
        let source = "
            use crate::sql::{self, params};
            use crate::Outcome;
            mod inner { pub fn helper() -> u8 { 1 } }
            struct Step { standard: u8 }
            // Words that name crates deep in the lab's graph, not roots.
            fn digest(bytes: u8) -> u8 { let log = bytes; log }
            fn a<T: Default>(stdout: u8) -> u8 {
                let core_count = inner::helper();
                let _ = (Outcome::Applied, T::default(), params![1]);
                let _: Option<sql::Error> = None;
                stdout + core_count + digest(1)
            }
        ";
        assert_eq!(held(source), Vec::<String>::new());
    }

    #[test]
    fn every_crate_the_lab_links_is_a_root() {
        for name in [
            "std",
            "core",
            "alloc",
            "proc_macro",
            "test",
            "rusqlite",
            "tempfile",
            "thiserror",
            "rustix",
            "postgres",
            "tokio",
            "tonic",
            "etcd_client",
            "lab_claims",
            "fencing_lab",
            "insta",
            "rstest",
            "libc",
        ] {
            assert!(is_crate_root(name), "{name} is not a crate root");
        }
        assert!(!is_crate_root("etcd-client"));
        assert!(!is_crate_root("apply"));
    }

    #[test]
    fn other_crates_are_held() {
        assert!(!held("fn a() { let _ = rustix::process::getpid(); }").is_empty());
        assert!(!held("fn a() { let _ = ::libc::getpid(); }").is_empty());
        assert!(!held("fn a() { std::process::exit(0) }").is_empty());
        assert!(!held("fn a() { let _ = std::env::vars(); }").is_empty());
        assert!(!held("use crate::*;").is_empty());
    }
}
