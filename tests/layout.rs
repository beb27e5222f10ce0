//! The data flow the README's architecture section describes, checked in the sources:
//! the GPU side only produces run results and profiles, so nothing under src/gpu/ names
//! the report, the explorer, the commands or the model's import (storing a profile is
//! the caller's).

mod common;

/// The `.rs` files under `dir`, its sub-folders' too, in order.
fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut paths = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            paths.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            paths.push(p);
        }
    }
    paths.sort();
    paths
}

/// The lines of the files under `src/gpu/` that name `what`, as `file:line: text`.
fn gpu_lines_naming(what: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for p in rust_files(&common::repo().join("src/gpu")) {
        let text = std::fs::read_to_string(&p).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if what.iter().any(|w| code.contains(w)) {
                found.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

/// The files under `src/gpu/` that bring the model's import in through a group
/// (`use crate::model::{Shape, import};`), which a line-by-line look misses.
fn gpu_files_grouping_model_import() -> Vec<String> {
    let mut found = Vec::new();
    for p in rust_files(&common::repo().join("src/gpu")) {
        let text = std::fs::read_to_string(&p).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("crate::model::{") {
            let group = &rest[at + "crate::model::{".len()..];
            let end = group.find("};").unwrap_or(group.len());
            let names = group[..end].split([',', '{', '}']).map(str::trim);
            if names
                .clone()
                .any(|n| n == "import" || n.starts_with("import::"))
            {
                found.push(p.display().to_string());
            }
            rest = &group[end..];
        }
    }
    found
}

#[test]
fn the_gpu_side_brings_in_no_model_import_through_a_group() {
    assert_eq!(gpu_files_grouping_model_import(), Vec::<String>::new());
}

#[test]
fn the_gpu_side_imports_nothing_that_comes_after_it() {
    assert_eq!(
        gpu_lines_naming(&[
            "crate::report",
            "crate::tui",
            "crate::commands",
            "model::import",
            "import::import",
        ]),
        Vec::<String>::new()
    );
}
