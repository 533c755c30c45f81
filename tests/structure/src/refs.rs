//! What one module writes: its `use` trees flattened to one path per name, every other path of
//! two segments or more (in signatures, bodies and macro input), and the names its items define.

use std::fmt;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// A path as a module writes it: `crate::pipeline::Call`, `super::args::encode`, `args::Part`.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    /// The segments, `$crate` written as `crate`.
    pub(crate) path: Vec<String>,
    /// A `use` leaf, or a path written anywhere else.
    pub(crate) kind: Kind,
    /// The line of the reference in its file (1-based).
    pub(crate) line: usize,
}

/// Where a reference is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A leaf of a `use` tree, and what it binds.
    Use(Binding),
    /// A path in a type, an expression, a pattern or a macro's input.
    Path,
}

/// What a `use` leaf binds in its module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Binding {
    /// `use a::b;` binds `b`; `use a::b as c;` binds `c`; `use a::{self};` binds `a`.
    Name(String),
    /// `use a::*;`
    Glob,
    /// `use a::Trait as _;`
    Anonymous,
}

impl Reference {
    /// The name this reference binds, when it is a named `use`.
    pub(crate) fn binds(&self, name: &str) -> bool {
        matches!(&self.kind, Kind::Use(Binding::Name(bound)) if bound == name)
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.join("::");
        match &self.kind {
            Kind::Path => f.write_str(&path),
            Kind::Use(Binding::Glob) => write!(f, "use {path}::*"),
            Kind::Use(Binding::Anonymous) => write!(f, "use {path} as _"),
            Kind::Use(Binding::Name(name)) if self.path.last() != Some(name) => {
                write!(f, "use {path} as {name}")
            }
            Kind::Use(Binding::Name(_)) => write!(f, "use {path}"),
        }
    }
}

/// The references of one item, nested modules left out (each is a module of its own).
pub(crate) fn references(item: &syn::Item) -> Vec<Reference> {
    let mut collector = Collector::default();
    collector.visit_item(item);
    collector.references
}

/// The name an item defines in its module's type, value or macro namespace (not `use` or `mod`).
pub(crate) fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(item) => &item.ident,
        syn::Item::Enum(item) => &item.ident,
        syn::Item::ExternCrate(item) => item.rename.as_ref().map_or(&item.ident, |(_, name)| name),
        syn::Item::Fn(item) => &item.sig.ident,
        syn::Item::Macro(item) => item.ident.as_ref()?,
        syn::Item::Static(item) => &item.ident,
        syn::Item::Struct(item) => &item.ident,
        syn::Item::Trait(item) => &item.ident,
        syn::Item::TraitAlias(item) => &item.ident,
        syn::Item::Type(item) => &item.ident,
        syn::Item::Union(item) => &item.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Every path of an item, collected the way the compiler would resolve them, except that
/// attributes and visibilities (`pub(in path)`) are no dependencies and nested modules are
/// visited as modules of their own.
#[derive(Default)]
struct Collector {
    references: Vec<Reference>,
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        // `use ::name::...` names another crate.
        if item.leading_colon.is_none() {
            flatten(&item.tree, &mut Vec::new(), &mut self.references);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        // One segment is a local name or an item in scope, whose `use` is collected already.
        if path.leading_colon.is_none() && path.segments.len() >= 2 {
            self.references.push(Reference {
                path: path
                    .segments
                    .iter()
                    .map(|segment| segment.ident.to_string())
                    .collect(),
                kind: Kind::Path,
                line: path.segments[0].ident.span().start().line,
            });
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        scan(mac.tokens.clone(), &mut self.references);
    }
}

/// One reference per leaf of a `use` tree.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Reference>) {
    let (ident, rename) = match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            flatten(&path.tree, prefix, out);
            prefix.pop();
            return;
        }
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                flatten(tree, prefix, out);
            }
            return;
        }
        syn::UseTree::Glob(glob) => {
            out.push(Reference {
                path: prefix.clone(),
                kind: Kind::Use(Binding::Glob),
                line: glob.star_token.spans[0].start().line,
            });
            return;
        }
        syn::UseTree::Name(name) => (&name.ident, None),
        syn::UseTree::Rename(rename) => (&rename.ident, Some(&rename.rename)),
    };
    // `use a::{self}` names `a` itself.
    let mut path = prefix.clone();
    if ident != "self" {
        path.push(ident.to_string());
    }
    let Some(last) = path.last() else {
        return;
    };
    let binding = match rename {
        Some(rename) if rename == "_" => Binding::Anonymous,
        Some(rename) => Binding::Name(rename.to_string()),
        None => Binding::Name(last.clone()),
    };
    let line = ident.span().start().line;
    out.push(Reference {
        path,
        kind: Kind::Use(binding),
        line,
    });
}

/// The paths in a macro's input, which syn leaves as tokens: every `a::b...` sequence of two
/// identifiers or more, `$crate::...` as `crate::...`, `::a::...` and `$var::...` left out.
fn scan(tokens: TokenStream, out: &mut Vec<Reference>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let is_punct = |i: usize, ch: char| matches!(tokens.get(i), Some(TokenTree::Punct(punct)) if punct.as_char() == ch);
    let is_path_sep = |i: usize| {
        matches!(tokens.get(i), Some(TokenTree::Punct(punct))
            if punct.as_char() == ':' && punct.spacing() == Spacing::Joint)
            && is_punct(i + 1, ':')
    };
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(group) => scan(group.stream(), out),
            TokenTree::Ident(head) => {
                let after_path_sep = i >= 2 && is_path_sep(i - 2);
                let after_dollar = i >= 1 && is_punct(i - 1, '$');
                let mut path = vec![head.to_string()];
                let mut next = i + 1;
                while is_path_sep(next) {
                    let Some(TokenTree::Ident(segment)) = tokens.get(next + 2) else {
                        break;
                    };
                    path.push(segment.to_string());
                    next += 3;
                }
                let skipped = after_path_sep || (after_dollar && head != "crate");
                if path.len() >= 2 && !skipped {
                    out.push(Reference {
                        path,
                        kind: Kind::Path,
                        line: head.span().start().line,
                    });
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}
