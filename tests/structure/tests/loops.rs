//! No import loop between the files of a crate: the check on small crates written for each rule,
//! and on every crate of the workspace.

use std::fs;
use std::path::{Path, PathBuf};

use feign_structure_tests::{package_loops, workspace_loops, Loop};

/// A package of these files (paths under the package, texts with their first line break
/// dropped) in the tests' temporary directory, written afresh.
fn package(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("structure")
        .join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    let manifest = format!("[package]\nname = \"{name}\"\nedition = \"2021\"\n");
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    for (path, text) in files {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text.strip_prefix('\n').unwrap_or(text)).unwrap();
    }
    dir
}

/// The files of each loop of a package of these files.
fn loops_of(name: &str, files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let loops = package_loops(&package(name, files)).unwrap_or_else(|error| panic!("{error}"));
    loops
        .iter()
        .map(|found| {
            let files = found.files().iter();
            files.map(|file| file.display().to_string()).collect()
        })
        .collect()
}

/// The shape of feign-core's loop: `multipart/encode.rs` takes a header check from
/// `pipeline/mod.rs`, which re-exports it from `pipeline/checks.rs` and imports `args.rs`, which
/// imports `multipart/encode.rs`; `encode.rs` names the check as `is_clean_from` says.
fn pipeline(name: &str, is_clean_from: &str) -> PathBuf {
    let encode = format!(
        "
use {is_clean_from};

pub(crate) fn encode() {{
    is_clean(\"\");
}}
"
    );
    package(
        name,
        &[
            ("src/lib.rs", "mod multipart;\nmod pipeline;\n"),
            (
                "src/pipeline/mod.rs",
                "
mod args;
pub(crate) mod checks;

pub(crate) use checks::is_clean;
use args::RequestArgs;

pub(crate) fn run(_: RequestArgs) {}
",
            ),
            (
                "src/pipeline/checks.rs",
                "
pub(crate) fn is_clean(_: &str) -> bool {
    true
}
",
            ),
            (
                "src/pipeline/args.rs",
                "
use crate::multipart::encode::encode;

pub(crate) struct RequestArgs;

pub(crate) fn args() -> RequestArgs {
    encode();
    RequestArgs
}
",
            ),
            ("src/multipart/mod.rs", "pub(crate) mod encode;\n"),
            ("src/multipart/encode.rs", &encode),
        ],
    )
}

#[test]
fn a_name_taken_through_a_re_export_depends_on_the_re_exporting_file() {
    let through =
        package_loops(&pipeline("through_re_export", "crate::pipeline::is_clean")).unwrap();
    assert_eq!(through.len(), 1, "{through:?}");
    let report = through[0].to_string();
    let expected = [
        "src/lib.rs: 3 files import each other in a loop, e.g. ",
        "\n  src/multipart/encode.rs\n    line 1: use crate::pipeline::is_clean -> src/pipeline/mod.rs\n",
        "\n  src/pipeline/args.rs\n    line 1: use crate::multipart::encode::encode -> src/multipart/encode.rs\n",
        "\n  src/pipeline/mod.rs\n    line 5: use args::RequestArgs -> src/pipeline/args.rs\n",
    ];
    for part in expected {
        assert!(report.contains(part), "{part:?} missing from:\n{report}");
    }

    // Taken from the file that defines it, the name closes no loop.
    let direct = pipeline("from_its_home", "crate::pipeline::checks::is_clean");
    let loops = package_loops(&direct).unwrap();
    assert!(loops.is_empty(), "{loops:?}");
}

#[test]
fn a_re_export_of_the_crate_root_depends_on_what_it_names_not_on_the_root() {
    let loops = loops_of(
        "root_re_export",
        &[
            (
                "src/lib.rs",
                "
mod a;
mod b;

pub use a::Alpha;
pub use b::Beta;
",
            ),
            (
                "src/a.rs",
                "
use crate::Beta;

pub struct Alpha(pub Beta);
",
            ),
            (
                "src/b.rs",
                "
pub struct Beta;

fn alpha() -> crate::Alpha {
    crate::Alpha(Beta)
}
",
            ),
        ],
    );
    assert_eq!(loops, [["src/a.rs", "src/b.rs"]]);
}

#[test]
fn a_path_through_a_module_the_file_declares_is_a_dependency() {
    let loops = loops_of(
        "child_path",
        &[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a/mod.rs",
                "
mod helper;

pub(crate) struct Shared;

pub(crate) fn entry() {
    helper::work();
}
",
            ),
            (
                "src/a/helper.rs",
                "
pub(crate) fn work() {
    crate::b::run();
}
",
            ),
            (
                "src/b.rs",
                "
pub(crate) fn run() {
    let _ = crate::a::Shared;
}
",
            ),
        ],
    );
    assert_eq!(loops, [["src/a/helper.rs", "src/a/mod.rs", "src/b.rs"]]);
}

#[test]
fn a_path_through_a_module_a_use_names_is_a_dependency() {
    let loops = loops_of(
        "use_alias",
        &[
            ("src/lib.rs", "mod body;\nmod call;\n"),
            ("src/body/mod.rs", "pub(crate) mod file;\n"),
            (
                "src/body/file.rs",
                "
pub(crate) fn open() {
    crate::call::send();
}
",
            ),
            (
                "src/call.rs",
                "
use crate::body;

pub(crate) fn send() {}

fn run() {
    body::file::open();
}
",
            ),
        ],
    );
    assert_eq!(loops, [["src/body/file.rs", "src/call.rs"]]);
}

#[test]
fn tests_written_in_a_file_are_left_out_and_what_follows_them_is_not() {
    let a = |after: &str| {
        format!(
            "
pub(crate) fn f() {{}}

#[cfg(test)]
mod tests {{
    use crate::b::g;
}}
{after}"
        )
    };
    let b = "
use crate::a::f;

pub(crate) fn g() {
    f();
}
";
    let only_tests = a("");
    let files = [
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", &only_tests),
        ("src/b.rs", b),
    ];
    let loops = loops_of("test_module", &files);
    assert!(loops.is_empty(), "{loops:?}");

    let code_after = a("\nfn later() {\n    crate::b::g();\n}\n");
    let files = [
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", &code_after),
        ("src/b.rs", b),
    ];
    assert_eq!(
        loops_of("after_test_module", &files),
        [["src/a.rs", "src/b.rs"]]
    );
}

#[test]
fn a_child_using_its_parent_is_no_loop() {
    let loops = loops_of(
        "child_of_parent",
        &[
            ("src/lib.rs", "mod pipeline;\n"),
            (
                "src/pipeline/mod.rs",
                "
mod call;

pub(crate) use call::run;

pub(crate) struct Request;

fn go() {
    call::run(Request);
}
",
            ),
            (
                "src/pipeline/call.rs",
                "
use super::Request;

pub(crate) fn run(_: Request) {}
",
            ),
        ],
    );
    assert!(loops.is_empty(), "{loops:?}");
}

#[test]
fn a_module_file_named_by_a_path_attribute_is_read() {
    let loops = loops_of(
        "path_attribute",
        &[
            (
                "src/lib.rs",
                "
mod builder;
#[path = \"private.rs\"]
pub mod __private;

pub use builder::Builder;
",
            ),
            (
                "src/builder.rs",
                "
use crate::__private::FromCore;

pub struct Builder;
",
            ),
            (
                "src/private.rs",
                "
pub use crate::Builder;

pub trait FromCore {}
",
            ),
        ],
    );
    assert_eq!(loops, [["src/builder.rs", "src/private.rs"]]);
}

#[test]
fn paths_in_macro_input_are_dependencies() {
    let loops = loops_of(
        "macro_input",
        &[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "
pub(crate) fn f() {
    println!(\"{}\", crate::b::NAME);
}
",
            ),
            (
                "src/b.rs",
                "
pub(crate) const NAME: &str = \"b\";

macro_rules! call {
    () => {
        $crate::a::f()
    };
}

fn g() {
    call!();
}
",
            ),
        ],
    );
    assert_eq!(loops, [["src/a.rs", "src/b.rs"]]);
}

#[test]
fn a_file_no_crate_root_reaches_is_an_error() {
    let files = [
        ("src/lib.rs", "mod a;\n"),
        ("src/a.rs", ""),
        ("src/stray.rs", ""),
    ];
    let error = package_loops(&package("stray", &files))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("src/stray.rs: no crate root of its package reaches it"),
        "{error}"
    );
}

#[test]
fn no_crate_of_the_workspace_has_an_import_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let loops = workspace_loops(&root).unwrap_or_else(|error| panic!("{error}"));
    let shown: Vec<String> = loops.iter().map(Loop::to_string).collect();
    assert!(
        loops.is_empty(),
        "{} import loops:\n\n{}",
        loops.len(),
        shown.join("\n")
    );
}
