//! `cargo xtask circles`: fails on an import circle between the top-level
//! modules of a crate: two modules (a file `src/x.rs`, or a folder `src/x/`
//! with everything in it) that each use the other, directly or around a
//! longer loop. An import through the crate root's re-exports (`use
//! crate::Store`, where lib.rs says `pub use store::Store`) counts as an
//! import of the module it names, so a tie cannot hide behind the root.
//! Ties inside one folder (a module and its children) are the folder's own
//! business and are not counted, nor are a file's unit tests
//! (`#[cfg(test)]` items).
//!
//! A folder module (`staff/grader/src/engine/`, whose `mod.rs` names its modules)
//! is checked the same way, one level down: its modules are its files and
//! folders, and a path `crate::engine::x` names its module `x`.
//!
//! The code is read as rustc reads it (`syn`): every `use` tree, every path
//! in items, types and expressions, and the `crate::…` paths inside macro
//! calls (`format!`, `matches!`), whose arguments are tokens to it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use syn::visit::Visit;

/// What is checked when no folder is named.
const DEFAULT_ROOTS: &[&str] = &[
    "src",
    "api/src",
    "staff/grader/src",
    "staff/grader/src/engine",
    "staff/grader/src/learner",
    "staff/grader/src/instructor",
    ".ci/xtask/src",
    ".ci/xtask/src/book",
];

/// Checks each of `roots` (folders under the lab's checkout; the default
/// ones when none is given) and prints a line for each. Exits 1 on a
/// circle, 2 when a file cannot be read.
pub fn run(roots: &[String]) -> ExitCode {
    let checkout = crate::checkout();
    let roots: Vec<String> = if roots.is_empty() {
        DEFAULT_ROOTS.iter().map(|&root| root.to_owned()).collect()
    } else {
        roots.to_vec()
    };
    let mut failed = false;
    for root in &roots {
        match check(&checkout.join(root)) {
            Ok(graph) => {
                let circles = graph.circles();
                println!(
                    "{root}: {} modules, {} arrows between them, {} circles",
                    graph.edges.len(),
                    graph.edges.values().map(BTreeSet::len).sum::<usize>(),
                    circles.len()
                );
                for circle in circles {
                    failed = true;
                    println!("  circle: {}", circle.join(" <-> "));
                    for a in &circle {
                        for b in graph.edges[a].iter().filter(|b| circle.contains(b)) {
                            println!("    {a} uses {b}");
                        }
                    }
                }
            }
            Err(error) => {
                eprintln!("xtask circles: {root}: {error}");
                return ExitCode::from(2);
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The modules of one folder and which uses which.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// Reads the folder `root`: its modules, the root file's re-exports, and
/// every path each module's files write.
fn check(root: &Path) -> Result<Graph, String> {
    let prefix = crate_prefix(root)?;
    let lib = ["lib.rs", "main.rs", "mod.rs"]
        .iter()
        .map(|name| root.join(name))
        .find(|path| path.exists())
        .ok_or("no lib.rs, main.rs or mod.rs")?;
    let modules = modules(root, &lib)?;
    let reexports = reexports(&parse(&lib)?, &modules);
    let mut edges = BTreeMap::new();
    for (name, files) in &modules {
        let mut targets = BTreeSet::new();
        for file in files {
            for path in crate_paths(&parse(file)?) {
                let Some(head) = path
                    .strip_prefix(prefix.as_slice())
                    .and_then(<[String]>::first)
                else {
                    continue;
                };
                let target = if modules.contains_key(head) {
                    Some(head)
                } else {
                    reexports.get(head)
                };
                if let Some(target) = target.filter(|target| *target != name) {
                    targets.insert(target.clone());
                }
            }
        }
        edges.insert(name.clone(), targets);
    }
    Ok(Graph { edges })
}

/// The path segments after `crate` that lead to `root`: none for a crate's
/// source folder (the one with `lib.rs` or `main.rs`), `["engine"]` for its
/// folder module `engine/`.
fn crate_prefix(root: &Path) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut folder = root.to_path_buf();
    while !(folder.join("lib.rs").exists() || folder.join("main.rs").exists()) {
        let name = folder
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| format!("{} is in no crate", root.display()))?;
        parts.insert(0, name.to_owned());
        folder = folder
            .parent()
            .ok_or_else(|| format!("{} is in no crate", root.display()))?
            .to_path_buf();
    }
    Ok(parts)
}

/// The top-level modules of `root`, each with its files: a folder (not
/// `bin/`) with every `.rs` under it and its `x.rs` beside it, or a file.
fn modules(root: &Path, lib: &Path) -> Result<BTreeMap<String, Vec<PathBuf>>, String> {
    let mut entries: Vec<PathBuf> = fs::read_dir(root)
        .map_err(|error| error.to_string())?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    entries.sort();
    let mut modules = BTreeMap::new();
    for path in entries {
        let Some(name) = path.file_stem().and_then(|name| name.to_str()) else {
            continue;
        };
        if path.is_dir() && name != "bin" {
            let mut files: Vec<PathBuf> = crate::files_under(&path)?
                .into_iter()
                .filter(|file| file.extension().is_some_and(|ext| ext == "rs"))
                .collect();
            let sibling = root.join(format!("{name}.rs"));
            if sibling.exists() {
                files.push(sibling);
            }
            modules.insert(name.to_owned(), files);
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && path != lib
            && !root.join(name).is_dir()
        {
            modules.insert(name.to_owned(), vec![path.clone()]);
        }
    }
    Ok(modules)
}

/// A file, parsed. Its `#[cfg(test)]` items, at any depth, are skipped
/// when its paths are read ([`Paths`]): a test may reach anything.
fn parse(path: &Path) -> Result<syn::File, String> {
    let text = fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    syn::parse_file(&text).map_err(|error| format!("{}: {error}", path.display()))
}

/// Whether an item carries `#[cfg(test)]`.
fn is_test_only(item: &syn::Item) -> bool {
    let attrs: &[syn::Attribute] = match item {
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Macro(item) => &item.attrs,
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        syn::Item::Union(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        _ => return false,
    };
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// What the root file re-exports (`pub use store::{Session, Store}`), each
/// name with the module it comes from.
fn reexports(
    lib: &syn::File,
    modules: &BTreeMap<String, Vec<PathBuf>>,
) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for item in &lib.items {
        let syn::Item::Use(item) = item else { continue };
        if matches!(item.vis, syn::Visibility::Inherited) {
            continue;
        }
        for path in use_paths(&item.tree) {
            let (Some(module), Some(name)) = (path.first(), path.last()) else {
                continue;
            };
            if path.len() > 1 && modules.contains_key(module) {
                names.insert(name.clone(), module.clone());
            }
        }
    }
    names
}

/// The paths a `use` tree imports, each as its segments (a rename ends in
/// the new name, a glob in `*`).
fn use_paths(tree: &syn::UseTree) -> Vec<Vec<String>> {
    match tree {
        syn::UseTree::Path(path) => use_paths(&path.tree)
            .into_iter()
            .map(|mut rest| {
                rest.insert(0, path.ident.to_string());
                rest
            })
            .collect(),
        syn::UseTree::Name(name) => vec![vec![name.ident.to_string()]],
        syn::UseTree::Rename(rename) => vec![vec![rename.rename.to_string()]],
        syn::UseTree::Glob(_) => vec![vec!["*".to_owned()]],
        syn::UseTree::Group(group) => group.items.iter().flat_map(use_paths).collect(),
    }
}

/// Every path in `file` that starts with `crate`, without it.
fn crate_paths(file: &syn::File) -> Vec<Vec<String>> {
    let mut paths = Paths::default();
    paths.visit_file(file);
    paths.found
}

/// Collects the `crate::…` paths of a file.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn add(&mut self, segments: Vec<String>) {
        if segments.first().is_some_and(|first| first == "crate") {
            self.found.push(segments[1..].to_vec());
        }
    }

    /// `crate :: a :: b` in a macro call's tokens, at any depth.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(ident) if run.is_empty() || colons == 2 => {
                    run.push(ident.to_string());
                    colons = 0;
                }
                proc_macro2::TokenTree::Punct(punct)
                    if punct.as_char() == ':' && !run.is_empty() =>
                {
                    colons += 1;
                }
                proc_macro2::TokenTree::Group(group) => {
                    self.add(std::mem::take(&mut run));
                    colons = 0;
                    self.tokens(group.stream());
                }
                _ => {
                    self.add(std::mem::take(&mut run));
                    colons = 0;
                    if let proc_macro2::TokenTree::Ident(ident) = token {
                        run.push(ident.to_string());
                    }
                }
            }
        }
        self.add(run);
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        for path in use_paths(&item.tree) {
            self.add(path);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.add(
            path.segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect(),
        );
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

impl Graph {
    /// The circles: each strongly connected set of more than one module
    /// (Tarjan's algorithm), its names sorted.
    fn circles(&self) -> Vec<Vec<String>> {
        let mut tarjan = Tarjan {
            edges: &self.edges,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            circles: Vec::new(),
        };
        for name in self.edges.keys() {
            if !tarjan.index.contains_key(name.as_str()) {
                tarjan.visit(name);
            }
        }
        tarjan.circles
    }
}

/// Tarjan's strongly connected components, over module names.
struct Tarjan<'a> {
    edges: &'a BTreeMap<String, BTreeSet<String>>,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    circles: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a str) {
        let at = self.index.len();
        self.index.insert(v, at);
        self.low.insert(v, at);
        self.stack.push(v);
        self.on_stack.insert(v);
        let edges = self.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !self.index.contains_key(w) {
                self.visit(w);
                let low = self.low[v].min(self.low[w]);
                self.low.insert(v, low);
            } else if self.on_stack.contains(w) {
                let low = self.low[v].min(self.index[w]);
                self.low.insert(v, low);
            }
        }
        if self.low[v] == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                self.circles.push(component);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate in a temporary folder: `files` as (path under src/, text).
    fn crate_with(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("xtask-circles-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        root
    }

    #[test]
    fn a_loop_through_a_reexport_and_a_macro_is_a_circle() {
        let root = crate_with(
            "loop",
            &[
                ("lib.rs", "mod a; mod b; mod c; pub use c::Thing;"),
                (
                    "a.rs",
                    "fn f() { let _ = format!(\"{}\", crate::b::NAME); }",
                ),
                ("b.rs", "use crate::Thing; pub const NAME: &str = \"\";"),
                (
                    "c/mod.rs",
                    "pub struct Thing; fn g() -> crate::a::X { todo!() }",
                ),
                ("c/inner.rs", "use super::Thing;"),
            ],
        );
        let graph = check(&root).unwrap();
        assert_eq!(graph.circles(), vec![vec!["a", "b", "c"]]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn arrows_one_way_and_tests_are_no_circle() {
        let root = crate_with(
            "oneway",
            &[
                ("main.rs", "mod a; mod b;"),
                ("a.rs", "use crate::b::Y;"),
                (
                    "b.rs",
                    "pub struct Y;\nmod inner {\n#[cfg(test)]\nconst T: crate::a::X = 0;\n}\n#[cfg(test)]\nmod tests { use crate::a; }",
                ),
            ],
        );
        let graph = check(&root).unwrap();
        assert!(graph.circles().is_empty());
        assert_eq!(graph.edges["a"], BTreeSet::from(["b".to_owned()]));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_folder_module_is_checked_one_level_down() {
        let root = crate_with(
            "folder",
            &[
                ("main.rs", "mod g;"),
                ("g/mod.rs", "pub mod x; pub mod y;"),
                ("g/x.rs", "use crate::g::y::Y; pub struct X;"),
                ("g/y.rs", "pub struct Y; fn f(_: crate::g::x::X) {}"),
            ],
        );
        let graph = check(&root.join("g")).unwrap();
        assert_eq!(graph.circles(), vec![vec!["x", "y"]]);
        fs::remove_dir_all(root).unwrap();
    }
}
