//! Each ```rust block of the README appears unchanged in `src/lib.rs`, which compiles.

#[test]
fn every_readme_rust_block_is_compiled_verbatim() {
    let readme = include_str!("../../../README.md");
    let snippets = include_str!("../src/lib.rs");
    let mut blocks = 0;
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line != "```rust" {
            continue;
        }
        let block: String = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            snippets.contains(&block),
            "this README block is not in examples/readme/src/lib.rs:\n{block}"
        );
        blocks += 1;
    }
    assert_eq!(
        blocks, 22,
        "a README block was added or removed: update src/lib.rs"
    );
}
