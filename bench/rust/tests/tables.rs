//! BENCHMARKS.md, the README's performance table and the charts beside them hold exactly what
//! `render-tables` renders from the raw outputs under `bench/results/raw/`: a figure edited by
//! hand, a raw file changed without rendering again, or a marker naming a file that is not
//! there fails here.

use feign_bench::figures::{differing, repository_root};

#[test]
fn the_documents_are_as_rendered_from_the_raw_outputs() {
    let root = repository_root();
    let stale = differing(&root).unwrap_or_else(|err| panic!("cannot render: {err}"));
    let described: Vec<String> = stale
        .iter()
        .map(|output| {
            let current = std::fs::read_to_string(root.join(&output.path)).unwrap_or_default();
            let rendered = output.contents.as_deref().unwrap_or_default();
            let first = current
                .lines()
                .zip(rendered.lines())
                .position(|(now, wanted)| now != wanted)
                .unwrap_or_else(|| current.lines().count().min(rendered.lines().count()));
            format!(
                "{} from line {}: has {:?}, renders {:?}",
                output.path.display(),
                first + 1,
                current.lines().nth(first).unwrap_or("(nothing)"),
                rendered.lines().nth(first).unwrap_or("(nothing)")
            )
        })
        .collect();
    assert!(
        described.is_empty(),
        "not as rendered (run `cargo run -p feign-bench --bin render-tables -- --write`):\n{}",
        described.join("\n")
    );
}
