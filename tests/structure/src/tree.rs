//! The module tree of one crate, read from its root file down its `mod` declarations, the way
//! the compiler finds its files: `mod a;` is `a.rs` or `a/mod.rs` beside a `lib.rs`, `main.rs`
//! or `mod.rs`, under `b/` for a `b.rs`, where `#[path]` says otherwise.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::refs::{self, Reference};

/// The crate root's module.
pub(crate) const ROOT: usize = 0;

/// One crate: its files and its modules, the root first in each.
pub(crate) struct Tree {
    /// Every file of the crate, as found from the root file's path.
    pub(crate) files: Vec<PathBuf>,
    /// Every module, file or inline, `#[cfg(test)]` inline modules left out.
    pub(crate) modules: Vec<Module>,
    /// `#[macro_export]` macros: they are items of the crate root, defined in these modules.
    pub(crate) exported_macros: BTreeMap<String, usize>,
}

/// A module of the crate.
pub(crate) struct Module {
    /// The module that declares it (`None` for the root).
    pub(crate) parent: Option<usize>,
    /// The file it is written in.
    pub(crate) file: usize,
    /// Its modules, by name.
    pub(crate) children: BTreeMap<String, usize>,
    /// The names its own items define (`use` bindings are among its references).
    pub(crate) defined: BTreeSet<String>,
    /// Every path it writes.
    pub(crate) references: Vec<Reference>,
}

/// Where a module's `mod` declarations find their files.
struct Dirs {
    /// Where `mod x;` looks for `x.rs` and `x/mod.rs`.
    children: PathBuf,
    /// What `#[path = "..."]` is relative to.
    path_attr: PathBuf,
}

impl Tree {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`).
    pub(crate) fn read(root: &Path) -> Result<Tree, Error> {
        let mut tree = Tree {
            files: Vec::new(),
            modules: Vec::new(),
            exported_macros: BTreeMap::new(),
        };
        let items = tree.parse(root)?;
        tree.add_module(None, 0, &items, &mod_rs_dirs(root))?;
        Ok(tree)
    }

    /// The module of `module` named `name`.
    pub(crate) fn child_named(&self, module: usize, name: &str) -> Option<usize> {
        self.modules[module].children.get(name).copied()
    }

    /// Whether `name` is a module, an item or a `use` binding of `module`.
    pub(crate) fn has_name(&self, module: usize, name: &str) -> bool {
        let module = &self.modules[module];
        module.children.contains_key(name)
            || module.defined.contains(name)
            || module
                .references
                .iter()
                .any(|reference| reference.binds(name))
    }

    /// Whether `file` holds a module that contains `of`'s own module: a file never depends on its
    /// ancestors, which declare it.
    pub(crate) fn is_ancestor_file(&self, file: usize, of: usize) -> bool {
        let own = self.modules.iter().position(|module| module.file == of);
        let mut next = own.and_then(|module| self.modules[module].parent);
        while let Some(module) = next {
            if self.modules[module].file == file {
                return true;
            }
            next = self.modules[module].parent;
        }
        false
    }

    fn parse(&mut self, path: &Path) -> Result<Vec<syn::Item>, Error> {
        let text = fs::read_to_string(path).map_err(|source| Error::read(path, source))?;
        let file = syn::parse_file(&text).map_err(|source| Error::parse(path, &source))?;
        self.files.push(path.to_owned());
        Ok(file.items)
    }

    fn add_module(
        &mut self,
        parent: Option<usize>,
        file: usize,
        items: &[syn::Item],
        dirs: &Dirs,
    ) -> Result<usize, Error> {
        let id = self.modules.len();
        self.modules.push(Module {
            parent,
            file,
            children: BTreeMap::new(),
            defined: BTreeSet::new(),
            references: Vec::new(),
        });
        for item in items {
            let syn::Item::Mod(declared) = item else {
                let module = &mut self.modules[id];
                module.references.extend(refs::references(item));
                if let Some(name) = refs::defined_name(item) {
                    if is_exported_macro(item) {
                        self.exported_macros.insert(name.clone(), id);
                    }
                    module.defined.insert(name);
                }
                continue;
            };
            let name = declared.ident.to_string();
            let child = match &declared.content {
                // Tests written in the file are no part of the crate's structure.
                Some(_) if is_cfg_test(&declared.attrs) => continue,
                Some((_, items)) => {
                    let dir = dirs.children.join(&name);
                    let dirs = Dirs {
                        children: dir.clone(),
                        path_attr: dir,
                    };
                    self.add_module(Some(id), file, items, &dirs)?
                }
                None => {
                    let (path, dirs) = self.locate(declared, dirs, file)?;
                    let child_file = self.files.len();
                    let items = self.parse(&path)?;
                    self.add_module(Some(id), child_file, &items, &dirs)?
                }
            };
            self.modules[id].children.insert(name, child);
        }
        Ok(id)
    }

    /// The file of `mod name;` and where its own declarations look.
    fn locate(
        &self,
        declared: &syn::ItemMod,
        dirs: &Dirs,
        declaring: usize,
    ) -> Result<(PathBuf, Dirs), Error> {
        if let Some(path) = path_attr(&declared.attrs) {
            let path = dirs.path_attr.join(path);
            let dirs = mod_rs_dirs(&path);
            return Ok((path, dirs));
        }
        let name = declared.ident.to_string();
        let flat = dirs.children.join(format!("{name}.rs"));
        let nested = dirs.children.join(&name).join("mod.rs");
        if flat.is_file() {
            let dirs = Dirs {
                children: dirs.children.join(&name),
                path_attr: dirs.children.clone(),
            };
            Ok((flat, dirs))
        } else if nested.is_file() {
            let dirs = mod_rs_dirs(&nested);
            Ok((nested, dirs))
        } else {
            Err(Error::missing_module(
                &self.files[declaring],
                &name,
                &flat,
                &nested,
            ))
        }
    }
}

/// A crate root, a `mod.rs` or a file named by `#[path]`: its modules' files sit beside it.
fn mod_rs_dirs(file: &Path) -> Dirs {
    let dir = file.parent().unwrap_or(Path::new("")).to_owned();
    Dirs {
        children: dir.clone(),
        path_attr: dir,
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && matches!(&attr.meta, syn::Meta::List(list) if list.tokens.to_string() == "test")
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(syn::MetaNameValue {
            path,
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(value),
                    ..
                }),
            ..
        }) if path.is_ident("path") => Some(value.value()),
        _ => None,
    })
}

fn is_exported_macro(item: &syn::Item) -> bool {
    matches!(item, syn::Item::Macro(mac)
        if mac.attrs.iter().any(|attr| attr.path().is_ident("macro_export")))
}
