//! ARCHITECTURE.md names the crate's modules and files: every one it names exists, so
//! the page cannot keep describing a module that moved or went away.

mod common;

use std::path::Path;

/// The backticked names on the page that are paths: repository paths (`src/…`,
/// `tests/…`, `kernels/…`), and names of modules or folders (`runner.rs`, `host/`),
/// which must exist somewhere under src/.
fn named_paths(page: &str) -> Vec<String> {
    page.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| !t.contains(' ') && !t.contains('<'))
        .filter(|t| t.ends_with(".rs") || t.ends_with('/') || t.starts_with("src/"))
        .map(str::to_string)
        .collect()
}

/// Every file and folder under `dir`, as paths relative to it ('/'-separated, folders
/// ending in '/').
fn tree(dir: &Path, under: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            let rel = format!("{under}{name}/");
            out.push(rel.clone());
            tree(&e.path(), &rel, out);
        } else {
            out.push(format!("{under}{name}"));
        }
    }
}

fn missing(page: &str, repo: &Path) -> Vec<String> {
    let mut src = Vec::new();
    tree(&repo.join("src"), "", &mut src);
    named_paths(page)
        .into_iter()
        .filter(|p| {
            let rooted = ["src/", "tests/", "kernels/", "profiles/"]
                .iter()
                .any(|r| p.starts_with(r));
            if rooted {
                // A pattern such as `kernels/*/recipe.toml` names a folder that exists.
                let fixed = p.split('*').next().unwrap();
                !repo.join(fixed).exists()
            } else {
                !src.iter()
                    .any(|f| *f == *p || f.ends_with(&format!("/{p}")))
            }
        })
        .collect()
}

#[test]
fn every_module_the_architecture_page_names_exists() {
    let repo = common::repo();
    let page = std::fs::read_to_string(repo.join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&page);
    assert!(
        named.len() > 40,
        "the page names {} paths: {named:?}",
        named.len()
    );
    assert_eq!(missing(&page, &repo), Vec::<String>::new());
}

#[test]
fn a_module_that_does_not_exist_is_caught() {
    let repo = common::repo();
    let page = "`src/model/store.rs`, `runner.rs`, `host/`, `src/gone.rs`, `nowhere.rs`, `kernels/*/recipe.toml`";
    assert_eq!(missing(page, &repo), vec!["src/gone.rs", "nowhere.rs"]);
}
