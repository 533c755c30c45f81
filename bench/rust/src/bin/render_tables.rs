//! Renders the figures of BENCHMARKS.md and the README's performance table from the raw outputs
//! under `bench/results/raw/` (see `feign_bench::figures`), and the charts beside them.
//!
//! `cargo run -p feign-bench --bin render-tables` says which files differ from their rendering
//! and fails if any does; `-- --write` rewrites them.

use std::process::ExitCode;

use clap::Parser;
use feign_bench::figures::{differing, repository_root};

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Render BENCHMARKS.md's and the README's tables from bench/results/raw/")]
struct Args {
    /// Rewrite the files that differ instead of failing.
    #[arg(long)]
    write: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let root = repository_root();
    let outputs = match differing(&root) {
        Ok(outputs) => outputs,
        Err(err) => {
            eprintln!("render-tables: {err}");
            return ExitCode::FAILURE;
        }
    };
    if outputs.is_empty() {
        println!("every table and chart is as rendered");
        return ExitCode::SUCCESS;
    }
    for output in &outputs {
        let path = root.join(&output.path);
        if !args.write {
            println!("differs from its rendering: {}", output.path.display());
            continue;
        }
        let written = match &output.contents {
            Some(contents) => std::fs::write(&path, contents),
            None => std::fs::remove_file(&path),
        };
        match written {
            Ok(()) if output.contents.is_some() => println!("rewrote {}", output.path.display()),
            Ok(()) => println!("removed {} (no block draws it)", output.path.display()),
            Err(err) => {
                eprintln!("render-tables: {}: {err}", output.path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if args.write {
        ExitCode::SUCCESS
    } else {
        println!("run `cargo run -p feign-bench --bin render-tables -- --write` to render them");
        ExitCode::FAILURE
    }
}
