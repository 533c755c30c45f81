//! The workspace's structure, checked: no file of a crate depends on itself through others.
//!
//! Every crate of a package (`src/lib.rs`, `src/main.rs`, `src/bin/*`) is read from its root
//! file down its `mod` declarations (`#[path]` included) and parsed with syn. Its graph has one
//! node per file (`a/mod.rs` and `a.rs` are both module `a`) and an edge for each path the file
//! writes that reaches another file of the crate:
//!
//! - `use` trees, and every other path of two segments or more (types, expressions, patterns,
//!   and the input of macros, which syn leaves as tokens), starting `crate::`, `super::`,
//!   `self::`, a module the file declares (`mod args;` then `args::X`) or a `use` binding that
//!   names a module (`use super::body;` then `body::file::X`);
//! - each resolved to the deepest module along the path, so a name taken through a `pub use`
//!   re-export depends on the re-exporting file, as written;
//! - except the crate root's re-exports, the public API: a name taken through one depends on the
//!   module the re-export names (and a `#[macro_export]` macro on the file defining it);
//! - a file's paths to itself and to its ancestor modules' files (which declare it) are no
//!   dependencies, nor are `#[cfg(test)]` modules written in a file.
//!
//! A loop is a strongly connected component of that graph (Tarjan's algorithm), reported with
//! its files and, for each, the lines that close it. A `.rs` file under `src/` that no crate root
//! reaches is an error: it would go unchecked.

mod error;
mod package;
mod refs;
mod report;
mod resolve;
mod scc;
mod tree;

use std::path::Path;

pub use error::Error;
pub use report::{Link, Loop};

/// The loops of every crate of every package under `root` (a directory holding a `Cargo.toml`
/// and a `src/`; `target/` and hidden directories left out), paths relative to `root`.
pub fn workspace_loops(root: &Path) -> Result<Vec<Loop>, Error> {
    let mut loops = Vec::new();
    for package in package::packages(root)? {
        loops.extend(package::loops(&package, root)?);
    }
    Ok(loops)
}

/// The loops of the crates of the package in `dir`, paths relative to `dir`.
pub fn package_loops(dir: &Path) -> Result<Vec<Loop>, Error> {
    package::loops(dir, dir)
}
