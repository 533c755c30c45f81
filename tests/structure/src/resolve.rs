//! Paths resolved to the files they depend on.
//!
//! A path starting `crate::`, `super::`, `self::`, a module of the writing module or a `use`
//! binding that names a module is followed down the module tree; it depends on the deepest module
//! it reaches, so a name taken through a re-export depends on the re-exporting file, as written.
//! The crate root is the exception: its re-exports are the public API, so a name taken through
//! one is followed to the module the re-export names.

use crate::refs::{Binding, Kind};
use crate::tree::{Tree, ROOT};

/// Re-exports followed one through another at most this deep (a `use` naming itself ends here).
const MAX_DEPTH: usize = 16;

/// One file depending on another through one reference.
#[derive(Debug, Clone)]
pub(crate) struct Edge {
    /// The file that writes the reference.
    pub(crate) from: usize,
    /// The file it depends on.
    pub(crate) to: usize,
    /// The line of the reference in `from`.
    pub(crate) line: usize,
    /// The reference as written: `use crate::pipeline::Call`.
    pub(crate) written: String,
}

/// The module a path reaches.
#[derive(Debug, Clone, Copy)]
struct Place {
    module: usize,
    /// Whether the path names the module itself (`crate::a`) rather than an item of it (`crate::a::B`).
    whole: bool,
}

impl Place {
    fn whole(module: usize) -> Self {
        Place {
            module,
            whole: true,
        }
    }

    fn item_of(module: usize) -> Self {
        Place {
            module,
            whole: false,
        }
    }
}

/// Every dependency between two files of the crate. A file's references to itself and to the
/// files of its ancestor modules (which declare it) are no dependencies.
pub(crate) fn edges(tree: &Tree) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (id, module) in tree.modules.iter().enumerate() {
        for reference in &module.references {
            let Some(place) = resolve(tree, id, &reference.path, 0) else {
                continue;
            };
            let (from, to) = (module.file, tree.modules[place.module].file);
            if from != to && !tree.is_ancestor_file(to, from) {
                edges.push(Edge {
                    from,
                    to,
                    line: reference.line,
                    written: reference.to_string(),
                });
            }
        }
    }
    edges
}

/// The module `path`, written in `module`, depends on; `None` for another crate's path, a local
/// name or a name that a `use` of `module` binds (that `use` is the dependency).
fn resolve(tree: &Tree, module: usize, path: &[String], depth: usize) -> Option<Place> {
    if depth > MAX_DEPTH {
        return None;
    }
    let (head, rest) = path.split_first()?;
    let mut current = match head.as_str() {
        "crate" => ROOT,
        "self" => module,
        "super" => tree.modules[module].parent?,
        name => match tree.child_named(module, name) {
            Some(child) => child,
            // A `use` that binds an item, not a module, is the dependency itself.
            None => match imported(tree, module, name, depth)? {
                place if place.whole => place.module,
                _ => return None,
            },
        },
    };
    let mut rest = rest;
    while let Some(("super", after)) = rest
        .split_first()
        .map(|(head, after)| (head.as_str(), after))
    {
        current = tree.modules[current].parent?;
        rest = after;
    }
    for (i, segment) in rest.iter().enumerate() {
        if let Some(child) = tree.child_named(current, segment) {
            current = child;
            continue;
        }
        if current != ROOT {
            return Some(Place::item_of(current));
        }
        // Through the crate root's re-exports to what they name.
        let place = root_name(tree, segment, depth)?;
        if !(place.whole && i + 1 < rest.len()) {
            return Some(place);
        }
        current = place.module;
    }
    Some(Place::whole(current))
}

/// What a `use` of `module` binding `name` reaches.
fn imported(tree: &Tree, module: usize, name: &str, depth: usize) -> Option<Place> {
    tree.modules[module]
        .references
        .iter()
        .filter(|reference| reference.binds(name))
        .find_map(|reference| resolve(tree, module, &reference.path, depth + 1))
}

/// What the crate root's item `name` is: a `#[macro_export]` macro's module, what a `use` of the
/// root binds, or the module of a root glob import that has the name.
fn root_name(tree: &Tree, name: &str, depth: usize) -> Option<Place> {
    if let Some(&module) = tree.exported_macros.get(name) {
        return Some(Place::item_of(module));
    }
    if let Some(place) = imported(tree, ROOT, name, depth) {
        return Some(place);
    }
    tree.modules[ROOT]
        .references
        .iter()
        .filter(|reference| reference.kind == Kind::Use(Binding::Glob))
        .filter_map(|glob| resolve(tree, ROOT, &glob.path, depth + 1))
        .find(|glob| glob.whole && tree.has_name(glob.module, name))
        .map(|glob| match tree.child_named(glob.module, name) {
            Some(child) => Place::whole(child),
            None => Place::item_of(glob.module),
        })
}
