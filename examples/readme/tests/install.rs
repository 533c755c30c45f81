//! The README's install section names packages as they are: each path dependency of its
//! ```toml block is the package of that directory (its `name`, publishable), and each line
//! `name = "0.1"` given for after publishing names one of those packages.

use std::path::Path;

/// The README's text from `## Install` to the next section.
fn install_section(readme: &str) -> &str {
    let start = readme.find("## Install\n").expect("an install section");
    let rest = &readme[start + 1..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// `key = value` from `[package]` of a manifest, unquoted.
fn package_field(manifest: &str, key: &str) -> Option<String> {
    let package = manifest.split("\n[").next()?;
    package.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

#[test]
fn the_install_lines_name_the_workspace_packages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let section = install_section(&readme);
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a toml block");
    let mut packages = Vec::new();
    for line in block.lines() {
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        let Some(path) = value
            .split("path = \"../feign-rs/")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
        else {
            continue;
        };
        let manifest = std::fs::read_to_string(root.join(path).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{line}: no {path}/Cargo.toml: {e}"));
        assert_eq!(
            package_field(&manifest, "name").as_deref(),
            Some(key.trim()),
            "{line}: {path} holds another package"
        );
        assert_ne!(
            package_field(&manifest, "publish").as_deref(),
            Some("false"),
            "{line}: {path} is not publishable"
        );
        packages.push(key.trim().to_owned());
    }
    assert!(packages.len() >= 4, "path dependencies: {packages:?}");
    let published: Vec<&str> = section
        .split('`')
        .filter_map(|code| code.strip_suffix(" = \"0.1\""))
        .collect();
    assert!(!published.is_empty(), "no line for after publishing");
    for name in published {
        if packages.iter().any(|p| p == name) {
            continue;
        }
        // Not in the block (the registry): the workspace directory of that name holds it.
        let manifest =
            std::fs::read_to_string(root.join(name).join("Cargo.toml")).unwrap_or_default();
        assert_eq!(
            package_field(&manifest, "name").as_deref(),
            Some(name),
            "`{name} = \"0.1\"` names no package of the install block or the workspace"
        );
    }
}
