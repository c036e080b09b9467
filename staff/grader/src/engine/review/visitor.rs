//! The review of one file against the allowlist.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Meta, Token};

use super::declared::{unraw, use_leaves};
use super::roots::{PRELUDE, STD_ROOTS, allowlist, is_crate_root};

/// The review of one file.
pub(super) struct Review<'a> {
    pub(super) lines: &'a [&'a str],
    pub(super) module: Vec<String>,
    pub(super) aliases: BTreeMap<String, Vec<String>>,
    pub(super) locals: BTreeSet<String>,
    pub(super) macros: BTreeSet<String>,
    /// (line, what) to the line's text.
    pub(super) found: BTreeMap<(usize, String), String>,
}

impl Review<'_> {
    pub(super) fn hold(&mut self, span: Span, what: String) {
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
pub(super) struct AttributeTokens(Meta);

impl syn::parse::Parse for AttributeTokens {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        input.parse().map(AttributeTokens)
    }
}

/// The path that starts at `at` among `trees`: `a::b::c`, `::a::b`,
/// `$crate::a`, `$m::a`; empty when none does. Returns the segments (a
/// macro variable as `$name`), the index just past it, and its span.
pub(super) fn path_at(trees: &[TokenTree], mut at: usize) -> (Vec<String>, usize, Span) {
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

pub(super) fn shorten(text: &str) -> String {
    const MAX: usize = 100;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(MAX).collect();
    short.push('…');
    short
}
