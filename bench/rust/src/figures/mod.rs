//! The figures of BENCHMARKS.md and of the README's performance table, rendered from the raw
//! outputs the benchmarks left under `bench/results/raw/`: no figure in those documents is typed.
//!
//! A rendered block sits between two marker lines, and everything between them is rewritten:
//!
//! ```text
//! <!-- table: overhead 2026-12-01-overhead.txt -->
//! (the table, then a line naming the raw file, the command, the commit, the load and CPU steal)
//! <!-- end -->
//! ```
//!
//! The first marker names what to render (a kind such as `overhead`, `per-call/instructions` or
//! `goals`; the table below lists them) and the raw files it reads, by their names under
//! `bench/results/raw/`. A `chart:` marker renders a chart instead: the SVG is written beside
//! the raw files' folder (`bench/results/<name>.svg`) and the block holds the image link.
//!
//! Each benchmark's module reads the lines its binary prints (and the older forms of them that
//! the committed raw files hold), and turns them into the tables; the binaries print their
//! summaries with the same functions, so the terminal and the documents agree. Ratios are taken
//! within a run and summarised over the runs as median (min–max); a table from one run says so.
//!
//! The kinds, and the raw files each reads:
//!
//! | kind | raw files |
//! |---|---|
//! | `per-call/instructions`, `per-call/cpu`, `per-call/allocations` | one `per-call` run |
//! | `overhead` | one `overhead` run |
//! | `vs-java/clients`, `vs-java/ratios` | one `vs-java` run |
//! | `resilience/killed`, `resilience/slow` (tables and charts) | one `lb-resilience` run |
//! | `adaptive` | one `adaptive` run |
//! | `hedging` | one `hedging` run |
//! | `freshness` | one `freshness` run |
//! | `download` | `download` runs, one per mode |
//! | `criterion` | one run of criterion benches |
//! | `pick` | `cargo bench -p feign-lb --bench pick` runs |
//! | `slow-backend` | one `cargo bench -p feign-lb --bench slow_backend` run |
//! | `client-registry` | one output of `client_registry` runs: of one build, or of two in turn |
//! | `registry/latency`, `registry/ratios` | one `server_load` run against Spring's registry |
//! | `dashboard` | `server_load` dashboard runs |
//! | `goals` | none: every goal the other blocks of both documents checked |
//!
//! `cargo run -p feign-bench --bin render-tables -- --write` rewrites the documents; the
//! `tables` test of this package fails when a committed document differs from its rendering.

pub mod adaptive;
pub mod components;
mod document;
pub mod download;
pub mod freshness;
mod goals;
pub mod hedging;
pub mod overhead;
pub mod per_call;
mod raw;
pub mod registry;
pub mod resilience;
mod spread;
mod text;
pub mod vs_java;

use std::fmt;
use std::path::{Path, PathBuf};

pub use document::{differing, render, Output};
pub use goals::Goal;
pub use raw::RawFile;
pub use spread::Spread;

/// Why a document could not be rendered: a marker that cannot be read, a raw file missing or
/// holding nothing of what its table needs.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(String);

impl Error {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Error {
        Error(message.into())
    }
}

/// What rendering can fail with.
pub type Result<T> = std::result::Result<T, Error>;

/// The documents rendered, relative to the repository's root.
pub const DOCUMENTS: [&str; 2] = ["BENCHMARKS.md", "README.md"];

/// Where the raw outputs are, relative to the repository's root.
pub const RAW_DIR: &str = "bench/results/raw";

/// Where the charts are written, relative to the repository's root.
pub const CHART_DIR: &str = "bench/results";

/// The repository's root, from this package's manifest directory.
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What one marker renders to: Markdown for the document, the goals its figures are held
/// against (gathered into the `goals` tables), and for a chart the SVG to write.
#[derive(Debug, Default)]
pub struct Block {
    /// The block's Markdown, ending with a newline.
    pub markdown: String,
    /// The goals this block's figures check.
    pub goals: Vec<Goal>,
    /// A chart: its file name under [`CHART_DIR`] and its SVG.
    pub chart: Option<(String, String)>,
}

/// A table of one benchmark's figures, the line saying how they were taken and summarised,
/// and the goals they were checked against. A binary prints it as it stands; a document gets
/// it as a [`Block`], with the raw files it came from.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The Markdown table (or tables).
    pub table: String,
    /// How the figures were taken and summarised.
    pub note: String,
    /// The goals checked, their source not yet known.
    pub goals: Vec<Goal>,
}

impl Summary {
    /// A summary of `table`, explained by `note`.
    pub fn new(table: impl fmt::Display, note: impl Into<String>) -> Summary {
        Summary {
            table: table.to_string(),
            note: note.into(),
            goals: Vec::new(),
        }
    }

    /// The same summary checking these goals too.
    #[must_use]
    pub fn with_goals(mut self, goals: Vec<Goal>) -> Summary {
        self.goals.extend(goals);
        self
    }

    /// The same summary, its note starting with the line in which the run described its set-up
    /// (the line of `file` that contains `marker`), when there is one.
    #[must_use]
    pub fn with_setup(mut self, file: &RawFile, marker: &str) -> Summary {
        if let Some(line) = file.lines().find(|line| line.contains(marker)) {
            self.note = format!(
                "The run's set-up, as it printed it: `{}`. {}",
                line.trim(),
                self.note
            );
        }
        self
    }

    /// The block of a document: the table, then the note and a sentence per raw file.
    pub fn into_block(self, files: &[&RawFile]) -> Block {
        let source = files.first().map_or("", |file| file.name());
        let goals = self
            .goals
            .into_iter()
            .map(|goal| Goal {
                source: source.to_owned(),
                ..goal
            })
            .collect();
        let mut markdown = self.table;
        markdown.push('\n');
        if !self.note.is_empty() {
            markdown.push_str(&self.note);
            markdown.push(' ');
        }
        let described: Vec<String> = files.iter().map(|file| file.describe()).collect();
        markdown.push_str(&described.join(" "));
        markdown.push('\n');
        Block {
            markdown,
            goals,
            chart: None,
        }
    }
}

/// `table`, a blank line, `note` and a line per goal, as a binary prints its summary.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}\n", self.table, self.note)?;
        for goal in &self.goals {
            let verdict = if goal.met { "met" } else { "MISSED" };
            writeln!(
                f,
                "goal: {}: {} ({} {verdict})",
                goal.what, goal.result, goal.target
            )?;
        }
        Ok(())
    }
}
