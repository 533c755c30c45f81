//! A loop as a developer reads it: its files, and for each the references that close it.

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::resolve::Edge;
use crate::scc;
use crate::tree::Tree;

/// Files of one crate that depend on each other in a loop (a strongly connected component of
/// the crate's file graph).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    crate_root: PathBuf,
    files: Vec<PathBuf>,
    links: Vec<Link>,
    /// One shortest cycle through the first file, that file first and last.
    cycle: Vec<PathBuf>,
}

/// One reference from a file of a loop to another file of the same loop; ordered by file and line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Link {
    /// The file that writes the reference.
    pub from: PathBuf,
    /// The line of the reference in `from` (1-based).
    pub line: usize,
    /// The reference as written, e.g. `use crate::pipeline::Call`.
    pub written: String,
    /// The file it depends on.
    pub to: PathBuf,
}

impl Loop {
    /// The root file of the crate (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`).
    pub fn crate_root(&self) -> &Path {
        &self.crate_root
    }

    /// The files in the loop, sorted.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every reference from a file of the loop to another, by file and line.
    pub fn links(&self) -> &[Link] {
        &self.links
    }
}

impl fmt::Display for Loop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(" -> ")
        };
        writeln!(
            f,
            "{}: {} files import each other in a loop, e.g. {}",
            self.crate_root.display(),
            self.files.len(),
            shown(&self.cycle)
        )?;
        for file in &self.files {
            writeln!(f, "  {}", file.display())?;
            for link in self.links.iter().filter(|link| &link.from == file) {
                writeln!(
                    f,
                    "    line {}: {} -> {}",
                    link.line,
                    link.written,
                    link.to.display()
                )?;
            }
        }
        Ok(())
    }
}

/// The loops of one crate, its paths shown relative to `base`.
pub(crate) fn loops(tree: &Tree, edges: &[Edge], base: &Path) -> Vec<Loop> {
    let shown = |file: usize| {
        tree.files[file]
            .strip_prefix(base)
            .unwrap_or(&tree.files[file])
            .to_owned()
    };
    let components = scc::loops(
        tree.files.len(),
        edges.iter().map(|edge| (edge.from, edge.to)),
    );
    let mut loops: Vec<Loop> = components
        .into_iter()
        .map(|files| {
            let mut links: Vec<Link> = edges
                .iter()
                .filter(|edge| files.contains(&edge.from) && files.contains(&edge.to))
                .map(|edge| Link {
                    from: shown(edge.from),
                    line: edge.line,
                    written: edge.written.clone(),
                    to: shown(edge.to),
                })
                .collect();
            links.sort();
            links.dedup();
            let mut files: Vec<PathBuf> = files.into_iter().map(shown).collect();
            files.sort();
            let cycle = shortest_cycle(&files, &links);
            Loop {
                crate_root: shown(0),
                files,
                links,
                cycle,
            }
        })
        .collect();
    loops.sort_by(|a, b| a.files.cmp(&b.files));
    loops
}

/// A shortest cycle from the first file back to it, by breadth-first search over the links.
fn shortest_cycle(files: &[PathBuf], links: &[Link]) -> Vec<PathBuf> {
    let start = &files[0];
    let mut came_from: Vec<(&PathBuf, &PathBuf)> = Vec::new();
    let mut queue = VecDeque::from([start]);
    while let Some(file) = queue.pop_front() {
        for link in links.iter().filter(|link| &link.from == file) {
            if &link.to == start {
                let mut cycle = vec![start.clone(), file.clone()];
                let mut at = file;
                while let Some(&(_, previous)) =
                    came_from.iter().find(|(reached, _)| *reached == at)
                {
                    cycle.push(previous.clone());
                    at = previous;
                }
                cycle.reverse();
                return cycle;
            }
            if !came_from.iter().any(|(reached, _)| *reached == &link.to) {
                came_from.push((&link.to, file));
                queue.push_back(&link.to);
            }
        }
    }
    unreachable!("every file of a strongly connected component lies on a cycle")
}
