//! The names a file declares or imports, read before the review.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Span;
use syn::visit::{self, Visit};

use super::roots::is_crate_root;

/// The names a file declares or imports, gathered before the review so that
/// order does not matter.
#[derive(Default)]
pub(super) struct Declared {
    pub(super) aliases: BTreeMap<String, Vec<String>>,
    pub(super) locals: BTreeSet<String>,
    pub(super) macros: BTreeSet<String>,
    /// The declarations spelled like a crate root, each held: the span to
    /// quote and what it is.
    pub(super) shadows: Vec<(Span, String)>,
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
pub(super) fn use_leaves(
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

pub(super) fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}
