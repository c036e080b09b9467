//! The review of a submission's source, before it is built: every path,
//! macro and attribute an exercise file names is held against the allowlist
//! (`grader/allowlist.txt`, compiled in). Anything outside it puts the
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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Meta, Token};

/// The allowlist's text.
const ALLOWLIST: &str = include_str!("../allowlist.txt");

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

/// The allowlist, read once.
struct Allowlist {
    paths: Vec<Vec<String>>,
    macros: BTreeSet<String>,
    attributes: BTreeSet<String>,
}

fn allowlist() -> &'static Allowlist {
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
    fn allows(&self, path: &[String]) -> bool {
        self.paths
            .iter()
            .any(|entry| path.len() >= entry.len() && path[..entry.len()] == entry[..])
    }

    /// Whether `path` is a module on the way to an entry (`use std::cmp;`).
    fn leads_to(&self, path: &[String]) -> bool {
        self.paths
            .iter()
            .any(|entry| entry.len() > path.len() && entry[..path.len()] == path[..])
    }
}

/// Names every Rust file may use without a path: primitives and the prelude.
const PRELUDE: &[&str] = &[
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
const STD_ROOTS: &[&str] = &["std", "core", "alloc"];

/// The crate roots the compiler brings without a dependency.
const BUILTIN_ROOTS: &[&str] = &["std", "core", "alloc", "proc_macro", "test", "libc"];

/// The manifests of the learner's crate, of the API it depends on and of
/// the harness: the packages and their direct dependencies, read for their
/// names.
const MANIFESTS: [&str; 3] = [
    include_str!("../../exercises/Cargo.toml"),
    include_str!("../../api/Cargo.toml"),
    include_str!("../../Cargo.toml"),
];

/// Every name a path can start with to mean a crate: the built-in roots,
/// the lab's own packages and each one's direct dependencies, `-` read as
/// `_`. The learner's crate reaches only `std`, `core`, `alloc` and the
/// API by name; the rest are the crates of the process it runs in. Not the
/// whole lock file: its transitive graph spells ordinary words (`log`,
/// `bytes`, `http`) that honest code names its own things.
fn crate_roots() -> &'static BTreeSet<String> {
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
fn manifest_crates(manifest: &str) -> Vec<String> {
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
fn is_crate_root(name: &str) -> bool {
    crate_roots().contains(name)
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

/// The names a file declares or imports, gathered before the review so that
/// order does not matter.
#[derive(Default)]
struct Declared {
    aliases: BTreeMap<String, Vec<String>>,
    locals: BTreeSet<String>,
    macros: BTreeSet<String>,
    /// The declarations spelled like a crate root, each held: the span to
    /// quote and what it is.
    shadows: Vec<(Span, String)>,
}

impl Declared {
    /// Notes a name the file declares, `kind` saying what it names (with
    /// its article): held if it is spelled like a crate root.
    fn declare(&mut self, name: &syn::Ident, kind: &str) {
        let text = unraw(name);
        if is_crate_root(&text) {
            self.shadows
                .push((name.span(), format!("{kind} named like the crate `{text}`")));
        }
    }
}

impl<'ast> Visit<'ast> for Declared {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&item.tree, Vec::new(), &mut leaves);
        for (path, name, span) in leaves {
            if let Some(name) = name {
                // `use rusqlite::{self}` binds the crate to its own name.
                if is_crate_root(&name) && path != [name.as_str()] {
                    self.shadows
                        .push((span, format!("an import named like the crate `{name}`")));
                }
                self.aliases.insert(name, path);
            }
        }
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if let Some(name) = &item.ident {
            self.declare(name, "a macro");
            self.macros.insert(name.to_string());
        }
        visit::visit_item_macro(self, item);
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        let named = match item {
            syn::Item::Const(item) => Some((&item.ident, "a constant")),
            syn::Item::Enum(item) => Some((&item.ident, "an enum")),
            syn::Item::Mod(item) => Some((&item.ident, "a module")),
            syn::Item::Static(item) => Some((&item.ident, "a static")),
            syn::Item::Struct(item) => Some((&item.ident, "a struct")),
            syn::Item::Trait(item) => Some((&item.ident, "a trait")),
            syn::Item::TraitAlias(item) => Some((&item.ident, "a trait alias")),
            syn::Item::Type(item) => Some((&item.ident, "a type alias")),
            syn::Item::Union(item) => Some((&item.ident, "a union")),
            syn::Item::Fn(item) => {
                // Declared with its signature, which methods share.
                self.locals.insert(unraw(&item.sig.ident));
                None
            }
            syn::Item::ExternCrate(item) => {
                // Held on its own; its new name is no local item.
                if let Some((_, rename)) = &item.rename {
                    self.declare(rename, "an extern crate");
                }
                None
            }
            _ => None,
        };
        if let Some((name, kind)) = named {
            self.declare(name, kind);
            self.locals.insert(unraw(name));
        }
        visit::visit_item(self, item);
    }

    fn visit_signature(&mut self, signature: &'ast syn::Signature) {
        self.declare(&signature.ident, "a function");
        visit::visit_signature(self, signature);
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        match item {
            syn::ImplItem::Const(item) => self.declare(&item.ident, "an associated constant"),
            syn::ImplItem::Type(item) => self.declare(&item.ident, "an associated type"),
            _ => {}
        }
        visit::visit_impl_item(self, item);
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        match item {
            syn::TraitItem::Const(item) => self.declare(&item.ident, "an associated constant"),
            syn::TraitItem::Type(item) => self.declare(&item.ident, "an associated type"),
            _ => {}
        }
        visit::visit_trait_item(self, item);
    }

    fn visit_foreign_item(&mut self, item: &'ast syn::ForeignItem) {
        match item {
            syn::ForeignItem::Static(item) => self.declare(&item.ident, "a static"),
            syn::ForeignItem::Type(item) => self.declare(&item.ident, "a type"),
            _ => {}
        }
        visit::visit_foreign_item(self, item);
    }

    fn visit_generic_param(&mut self, param: &'ast syn::GenericParam) {
        match param {
            syn::GenericParam::Type(param) => {
                self.declare(&param.ident, "a generic parameter");
                self.locals.insert(unraw(&param.ident));
            }
            syn::GenericParam::Const(param) => self.declare(&param.ident, "a const parameter"),
            syn::GenericParam::Lifetime(param) => {
                self.declare(&param.lifetime.ident, "a lifetime");
            }
        }
        visit::visit_generic_param(self, param);
    }

    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.declare(&pat.ident, "a binding");
        visit::visit_pat_ident(self, pat);
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if let Some(name) = &field.ident {
            self.declare(name, "a field");
        }
        visit::visit_field(self, field);
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        self.declare(&variant.ident, "an enum variant");
        visit::visit_variant(self, variant);
    }

    fn visit_label(&mut self, label: &'ast syn::Label) {
        self.declare(&label.name.ident, "a label");
        visit::visit_label(self, label);
    }
}

/// A `use` tree's leaves: the full path, the name it is bound to (none for
/// a glob), and the span to quote.
fn use_leaves(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, Span)>,
) {
    let extend = |name: &syn::Ident| {
        let mut path = prefix.clone();
        path.push(unraw(name));
        path
    };
    match tree {
        syn::UseTree::Path(path) => use_leaves(&path.tree, extend(&path.ident), out),
        syn::UseTree::Name(name) if name.ident == "self" => {
            let bound = prefix.last().cloned();
            out.push((prefix.clone(), bound, name.ident.span()));
        }
        syn::UseTree::Name(name) => {
            out.push((
                extend(&name.ident),
                Some(unraw(&name.ident)),
                name.ident.span(),
            ));
        }
        syn::UseTree::Rename(rename) => {
            let path = if rename.ident == "self" {
                prefix.clone()
            } else {
                extend(&rename.ident)
            };
            out.push((path, Some(unraw(&rename.rename)), rename.ident.span()));
        }
        syn::UseTree::Glob(glob) => out.push((prefix.clone(), None, glob.star_token.span)),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_leaves(tree, prefix.clone(), out);
            }
        }
    }
}

fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// The review of one file.
struct Review<'a> {
    lines: &'a [&'a str],
    module: Vec<String>,
    aliases: BTreeMap<String, Vec<String>>,
    locals: BTreeSet<String>,
    macros: BTreeSet<String>,
    /// (line, what) to the line's text.
    found: BTreeMap<(usize, String), String>,
}

impl Review<'_> {
    fn hold(&mut self, span: Span, what: String) {
        let line = span.start().line.max(1);
        let text = shorten(self.lines.get(line - 1).copied().unwrap_or_default().trim());
        self.found.entry((line, what)).or_insert(text);
    }

    /// The path with its first segment resolved: an import replaced by what
    /// it names, `super` and `self` by the module, the std roots made one.
    /// `None` when it is the file's own or the prelude's. A first segment
    /// spelled like a crate root is the crate, whatever the file declares
    /// (that declaration is held on its own): `fn std() {}` lives among
    /// values, so rustc still reads `std::fs::read` as the crate's.
    fn resolve(&self, segments: &[String], leading_colon: bool) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let mut path: Vec<String> = if leading_colon || (!rest.is_empty() && is_crate_root(first)) {
            segments.to_vec()
        } else if let Some(target) = self.aliases.get(first) {
            target.iter().chain(rest).cloned().collect()
        } else if first == "super" {
            let parent = &self.module[..self.module.len().saturating_sub(1).max(1)];
            parent.iter().chain(rest).cloned().collect()
        } else if first == "self" {
            return self.resolve(rest, false);
        } else if first == "$crate" {
            std::iter::once("crate".to_owned())
                .chain(rest.iter().cloned())
                .collect()
        } else if segments.len() == 1 || PRELUDE.contains(&first.as_str()) {
            return None;
        } else if self.locals.contains(first) {
            // One of the file's own names: its own, unless the path goes on
            // through a name an import binds, which a local module may
            // re-export (`mod m { pub use std as s; }` makes `m::s::fs` a
            // `std::fs`), or through a macro's variable, which may be one.
            let at = 1 + rest.iter().position(|segment| {
                segment.starts_with('$') || self.aliases.contains_key(segment)
            })?;
            match self.aliases.get(&segments[at]) {
                Some(target) => target.iter().chain(&segments[at + 1..]).cloned().collect(),
                None => segments.to_vec(),
            }
        } else {
            segments.to_vec()
        };
        if STD_ROOTS.contains(&path[0].as_str()) {
            path[0] = "std".to_owned();
        }
        Some(path)
    }

    /// Holds a path the allowlist does not cover.
    fn check_path(&mut self, segments: &[String], leading_colon: bool, span: Span) {
        let Some(path) = self.resolve(segments, leading_colon) else {
            return;
        };
        let list = allowlist();
        if list.allows(&path) {
            return;
        }
        let root = &path[0];
        let builds = path.iter().skip(1).any(|segment| segment.starts_with('$'));
        let what = if root.starts_with('$') {
            format!(
                "a path a macro builds from its variable `{}`",
                path.join("::")
            )
        } else if builds {
            format!("a path a macro builds: `{}`", path.join("::"))
        } else {
            format!(
                "names `{}`, which the allowlist does not have",
                path.join("::")
            )
        };
        self.hold(span, what);
    }

    /// A `use` leaf: held unless it is allowed, or a module on the way to
    /// an allowed item (whose uses are then checked in full).
    fn check_use(&mut self, path: &[String], glob: bool, span: Span) {
        let Some(resolved) = self.resolve_use(path) else {
            return;
        };
        let list = allowlist();
        let fine = list.allows(&resolved) || (!glob && list.leads_to(&resolved));
        if !fine {
            let star = if glob { "::*" } else { "" };
            self.hold(
                span,
                format!(
                    "imports `{}{star}`, which the allowlist does not have",
                    resolved.join("::")
                ),
            );
        }
    }

    fn resolve_use(&self, path: &[String]) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        let mut resolved: Vec<String> = if first == "super" {
            let parent = &self.module[..self.module.len().saturating_sub(1).max(1)];
            parent.iter().chain(rest).cloned().collect()
        } else if first == "self" {
            // The file's own items: fine, unless the path goes on through
            // an import (`use self::m::s::fs::*;`).
            return self.resolve(rest, false);
        } else if let Some(target) = self.aliases.get(first).filter(|_| path.len() > 1) {
            target.iter().chain(rest).cloned().collect()
        } else {
            path.to_vec()
        };
        if STD_ROOTS.contains(&resolved[0].as_str()) {
            resolved[0] = "std".to_owned();
        }
        Some(resolved)
    }

    /// A macro called by `path`; its tokens are read too.
    fn check_macro(&mut self, mac: &syn::Macro) {
        let segments: Vec<String> = mac.path.segments.iter().map(|s| unraw(&s.ident)).collect();
        let span = mac
            .path
            .segments
            .first()
            .map_or_else(Span::call_site, |s| s.ident.span());
        self.check_macro_name(&segments, mac.path.leading_colon.is_some(), span);
        self.scan_tokens(mac.tokens.clone());
    }

    fn check_macro_name(&mut self, segments: &[String], leading_colon: bool, span: Span) {
        match segments {
            [name] if self.macros.contains(name) => {}
            [name] if !self.aliases.contains_key(name) => {
                if !allowlist().macros.contains(name) {
                    self.hold(
                        span,
                        format!("calls `{name}!`, which the allowlist does not have"),
                    );
                }
            }
            _ => {
                // `std::println!` is `println!`; any other path, as a path.
                let resolved = self.resolve(segments, leading_colon);
                let plain_std = resolved.as_ref().is_some_and(|path| {
                    path.len() == 2 && path[0] == "std" && allowlist().macros.contains(&path[1])
                });
                if !plain_std {
                    self.check_path(segments, leading_colon, span);
                }
            }
        }
    }

    /// Reads a macro's tokens: the paths they spell, the macros they call,
    /// the attributes they carry, and the keywords that are always held.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut at = 0;
        while at < trees.len() {
            match &trees[at] {
                TokenTree::Group(group) => {
                    self.scan_tokens(group.stream());
                    at += 1;
                }
                TokenTree::Punct(punct) if punct.as_char() == '#' => {
                    // `# [attr ...]` or `# ! [attr ...]`.
                    let mut next = at + 1;
                    if matches!(trees.get(next), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
                        next += 1;
                    }
                    if let Some(TokenTree::Group(group)) = trees.get(next) {
                        if group.delimiter() == Delimiter::Bracket {
                            if let Ok(attribute) = syn::parse2::<AttributeTokens>(group.stream()) {
                                self.check_meta(&attribute.0, group.span());
                            } else {
                                self.hold(
                                    group.span(),
                                    "an attribute the review cannot read".to_owned(),
                                );
                            }
                        }
                    }
                    at += 1;
                }
                TokenTree::Punct(punct) if punct.as_char() == '$' || punct.as_char() == ':' => {
                    let (path, end, span) = path_at(&trees, at);
                    if path.is_empty() {
                        at += 1;
                    } else {
                        self.token_path(&trees, &path, end, span, at);
                        at = end;
                    }
                }
                TokenTree::Ident(_) => {
                    let (path, end, span) = path_at(&trees, at);
                    self.token_path(&trees, &path, end, span, at);
                    at = end.max(at + 1);
                }
                _ => at += 1,
            }
        }
    }

    /// One path found among a macro's tokens, `end` just past it.
    fn token_path(
        &mut self,
        trees: &[TokenTree],
        path: &[String],
        end: usize,
        span: Span,
        start: usize,
    ) {
        let leading_colon = matches!(&trees[start], TokenTree::Punct(p) if p.as_char() == ':');
        let called = matches!(trees.get(end), Some(TokenTree::Punct(p)) if p.as_char() == '!')
            && !matches!(trees.get(end + 1), Some(TokenTree::Punct(p)) if p.as_char() == '=');
        match path {
            [one] if one == "unsafe" => self.hold(span, "unsafe code".to_owned()),
            [one] if one == "extern" => self.hold(span, "an extern block, crate or ABI".to_owned()),
            [one] if called && one == "macro_rules" => {}
            _ if called => self.check_macro_name(path, leading_colon, span),
            [one] if STD_ROOTS.contains(&one.as_str()) => self.hold(
                span,
                format!(
                    "hands the crate root `{one}` to a macro, which could build a path from it"
                ),
            ),
            [one] => {
                if let Some(target) = self.aliases.get(one).cloned() {
                    self.check_path(&target, false, span);
                }
            }
            _ => self.check_path(path, leading_colon, span),
        }
    }

    /// An attribute's name against the allowlist; `cfg_attr` is opened.
    fn check_meta(&mut self, meta: &Meta, span: Span) {
        let path = meta.path();
        let name: Vec<String> = path.segments.iter().map(|s| unraw(&s.ident)).collect();
        let first = name.first().cloned().unwrap_or_default();
        if !allowlist().attributes.contains(&first) {
            self.hold(
                span,
                format!(
                    "carries the attribute `#[{}]`, which the allowlist does not have",
                    name.join("::")
                ),
            );
            return;
        }
        match meta {
            Meta::List(list) if first == "cfg_attr" => {
                match list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
                    Ok(metas) => {
                        for carried in metas.iter().skip(1) {
                            self.check_meta(carried, span);
                        }
                    }
                    Err(_) => self.hold(span, "a cfg_attr the review cannot read".to_owned()),
                }
            }
            Meta::List(list) => self.scan_tokens(list.tokens.clone()),
            Meta::NameValue(value) => self.visit_expr(&value.value),
            Meta::Path(_) => {}
        }
    }
}

/// An attribute's inside, `name(...)` or `name = value`.
struct AttributeTokens(Meta);

impl syn::parse::Parse for AttributeTokens {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        input.parse().map(AttributeTokens)
    }
}

/// The path that starts at `at` among `trees`: `a::b::c`, `::a::b`,
/// `$crate::a`, `$m::a`; empty when none does. Returns the segments (a
/// macro variable as `$name`), the index just past it, and its span.
fn path_at(trees: &[TokenTree], mut at: usize) -> (Vec<String>, usize, Span) {
    let span = trees[at].span();
    let mut segments = Vec::new();
    let colons = |at: usize| {
        matches!(trees.get(at), Some(TokenTree::Punct(p)) if p.as_char() == ':')
            && matches!(trees.get(at + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
    };
    if colons(at) {
        at += 2;
    }
    loop {
        match trees.get(at) {
            Some(TokenTree::Ident(ident)) => {
                segments.push(ident.to_string().trim_start_matches("r#").to_owned());
                at += 1;
            }
            Some(TokenTree::Punct(p)) if p.as_char() == '$' => match trees.get(at + 1) {
                Some(TokenTree::Ident(ident)) => {
                    segments.push(format!("${ident}"));
                    at += 2;
                }
                _ => break,
            },
            _ => break,
        }
        if colons(at)
            && matches!(
                trees.get(at + 2),
                Some(TokenTree::Ident(_) | TokenTree::Punct(_))
            )
        {
            let next_is_segment = match trees.get(at + 2) {
                Some(TokenTree::Ident(_)) => true,
                Some(TokenTree::Punct(p)) => p.as_char() == '$',
                _ => false,
            };
            if next_is_segment {
                at += 2;
                continue;
            }
        }
        break;
    }
    (segments, at, span)
}

impl<'ast> Visit<'ast> for Review<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        for attribute in &item.attrs {
            self.visit_attribute(attribute);
        }
        let mut leaves = Vec::new();
        use_leaves(&item.tree, Vec::new(), &mut leaves);
        if item.leading_colon.is_some() {
            for leaf in &mut leaves {
                if let Some(first) = leaf.0.first_mut() {
                    if STD_ROOTS.contains(&first.as_str()) {
                        *first = "std".to_owned();
                    }
                }
            }
        }
        for (path, name, span) in leaves {
            self.check_use(&path, name.is_none(), span);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| unraw(&s.ident)).collect();
        let span = path
            .segments
            .first()
            .map_or_else(Span::call_site, |s| s.ident.span());
        self.check_path(&segments, path.leading_colon.is_some(), span);
        // Generic arguments hold paths of their own.
        visit::visit_path(self, path);
    }

    fn visit_attribute(&mut self, attribute: &'ast Attribute) {
        let span = attribute.pound_token.span;
        self.check_meta(&attribute.meta, span);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.check_macro(mac);
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        for attribute in &item.attrs {
            self.visit_attribute(attribute);
        }
        if item.ident.is_some() {
            // A definition: its name is the file's, its body is read.
            self.scan_tokens(item.mac.tokens.clone());
        } else {
            self.check_macro(&item.mac);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_none() {
            self.hold(
                item.mod_token.span,
                "`mod name;` compiles another file".to_owned(),
            );
        }
        if item.unsafety.is_some() {
            self.hold(item.mod_token.span, "unsafe code".to_owned());
        }
        visit::visit_item_mod(self, item);
    }

    fn visit_item_foreign_mod(&mut self, item: &'ast syn::ItemForeignMod) {
        self.hold(item.abi.extern_token.span, "an extern block".to_owned());
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        self.hold(item.extern_token.span, "an extern crate".to_owned());
    }

    fn visit_abi(&mut self, abi: &'ast syn::Abi) {
        self.hold(abi.extern_token.span, "an extern ABI".to_owned());
    }

    fn visit_expr_unsafe(&mut self, expr: &'ast syn::ExprUnsafe) {
        self.hold(expr.unsafe_token.span, "unsafe code".to_owned());
        visit::visit_expr_unsafe(self, expr);
    }

    fn visit_signature(&mut self, signature: &'ast syn::Signature) {
        if let Some(token) = &signature.unsafety {
            self.hold(token.span, "unsafe code".to_owned());
        }
        visit::visit_signature(self, signature);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if let Some(token) = &item.unsafety {
            self.hold(token.span, "unsafe code".to_owned());
        }
        visit::visit_item_impl(self, item);
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        if let Some(token) = &item.unsafety {
            self.hold(token.span, "unsafe code".to_owned());
        }
        visit::visit_item_trait(self, item);
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        if let syn::Item::Verbatim(tokens) = item {
            let span = tokens
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |tree| tree.span());
            self.hold(span, "an item the review cannot read".to_owned());
        }
        visit::visit_item(self, item);
    }

    fn visit_expr(&mut self, expr: &'ast syn::Expr) {
        if let syn::Expr::Verbatim(tokens) = expr {
            let span = tokens
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |tree| tree.span());
            self.hold(span, "an expression the review cannot read".to_owned());
        }
        visit::visit_expr(self, expr);
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 100;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(MAX).collect();
    short.push('…');
    short
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
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        let mut stack = vec![lab.join("solutions"), lab.join("exercises")];
        for entry in std::fs::read_dir(lab.join("tests"))
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
