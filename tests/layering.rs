//! The pipeline's shape (issue 11): `engine/` parses what it is given. Files a launch names are
//! found in `extract/` (mounted ConfigMap keys: `extract/k8s/mounts.rs`) and reach the engine
//! parsers as `Launch::files`; the engine parsers never go back up to the readers.

mod common;

#[test]
fn engine_files_parse_what_they_are_given() {
    let dir = common::root().join("src/engine");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Unit tests may build their launches with the shell reader.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for word in ["crate::extract", "mounts"] {
            assert!(
                !code.contains(word),
                "{} uses {word}: resolve it in extract/ and hand the engine what it needs",
                path.display()
            );
        }
        read += 1;
    }
    assert!(read >= 8, "only {read} files in {}", dir.display());
}

/// The `.rs` files under `rel` (a directory, walked, or one file) with their code before any
/// `#[cfg(test)]` module.
fn code_under(rel: &str) -> Vec<(std::path::PathBuf, String)> {
    let mut todo = vec![common::root().join(rel)];
    let mut out = Vec::new();
    while let Some(path) = todo.pop() {
        if path.is_dir() {
            todo.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .to_string();
            out.push((path, code));
        }
    }
    assert!(!out.is_empty(), "no Rust file under {rel}");
    out
}

/// Imports flow one way, down the pipeline (issue 27): what a floor uses lives on it or below.
/// `RuleSettings` is the rules' own (`src/rules/settings.rs`), not kvlint.toml's; units of memory
/// are `src/units.rs`'s, not the capacity model's; and the library never reaches up to the
/// command line, whose `--format` is the reports' `report::Format`.
#[test]
fn no_floor_reaches_up() {
    let forbidden: &[(&str, &[&str])] = &[
        ("src/rules", &["crate::config"]),
        (
            "src/report",
            &["crate::config", "capacity::GIB", "capacity::MIB"],
        ),
        ("src/capacity", &["crate::report", "crate::rules"]),
        ("src/pipeline.rs", &["crate::config"]),
    ];
    for (floor, words) in forbidden {
        for (path, code) in code_under(floor) {
            for word in *words {
                assert!(
                    !code.contains(word),
                    "{} uses {word}: move what it needs down to its own floor",
                    path.display()
                );
            }
        }
    }
}

/// Each unit of memory is defined once, in `src/units.rs`, for every floor to share.
#[test]
fn units_are_defined_once() {
    for (path, code) in code_under("src") {
        if path.ends_with("src/units.rs") {
            continue;
        }
        for unit in ["pub const GIB", "pub const MIB"] {
            assert!(
                !code.contains(unit),
                "{} defines {unit}: use crate::units",
                path.display()
            );
        }
    }
}

/// Only the binary and the command-line floor name `cli`: nothing below it imports it back.
#[test]
fn only_the_command_line_uses_cli() {
    for (path, code) in code_under("src") {
        let rel = path.strip_prefix(common::root()).unwrap();
        if rel.starts_with("src/cli") || rel == std::path::Path::new("src/main.rs") {
            continue;
        }
        assert!(
            !code.contains("crate::cli"),
            "{} uses crate::cli: the command line sits on top, nothing imports it back",
            rel.display()
        );
    }
}
