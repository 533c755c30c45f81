//! The packages under a directory, and the crates of each: `src/lib.rs`, `src/main.rs`,
//! `src/bin/*.rs` and `src/bin/*/main.rs`, each a crate with a module tree of its own.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::report::{self, Loop};
use crate::resolve;
use crate::tree::Tree;

/// Every directory under `root` holding a `Cargo.toml` and a `src/`, sorted; hidden directories,
/// `target/` and Cargo's build directories wherever they are (marked by a `CACHEDIR.TAG`) are
/// left out.
pub(crate) fn packages(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            found.push(dir.clone());
        }
        for entry in read_dir(&dir)? {
            let name = entry
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or_default();
            let skipped =
                name == "target" || name.starts_with('.') || entry.join("CACHEDIR.TAG").exists();
            if entry.is_dir() && !skipped {
                pending.push(entry);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The loops of every crate of the package in `dir`, paths shown relative to `base`. Fails when
/// a `.rs` file under `src/` belongs to none of its crates: it would go unchecked.
pub(crate) fn loops(dir: &Path, base: &Path) -> Result<Vec<Loop>, Error> {
    let src = dir.join("src");
    let mut unreached: BTreeSet<PathBuf> = rust_files(&src)?.into_iter().collect();
    let mut loops = Vec::new();
    for root in crate_roots(&src)? {
        let tree = Tree::read(&root)?;
        for file in &tree.files {
            unreached.remove(file);
        }
        loops.extend(report::loops(&tree, &resolve::edges(&tree), base));
    }
    match unreached.first() {
        Some(file) => Err(Error::unreached(file.strip_prefix(base).unwrap_or(file))),
        None => Ok(loops),
    }
}

fn crate_roots(src: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .filter(|path| path.is_file())
        .collect();
    let bin = src.join("bin");
    if bin.is_dir() {
        for entry in read_dir(&bin)? {
            if entry.extension().is_some_and(|extension| extension == "rs") {
                roots.push(entry);
            } else if entry.join("main.rs").is_file() {
                roots.push(entry.join("main.rs"));
            }
        }
    }
    Ok(roots)
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for entry in read_dir(dir)? {
        if entry.is_dir() {
            files.extend(rust_files(&entry)?);
        } else if entry.extension().is_some_and(|extension| extension == "rs") {
            files.push(entry);
        }
    }
    Ok(files)
}

/// The entries of `dir`, sorted.
fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = fs::read_dir(dir).map_err(|source| Error::read(dir, source))?;
    let mut paths = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| Error::read(dir, source))?;
    paths.sort();
    Ok(paths)
}
