//! The data flow the README's architecture section describes, checked in the sources:
//! the GPU side only produces run results and profiles, so nothing under src/gpu/ names
//! the report, the explorer, the commands or the model's import (storing a profile is
//! the caller's); the model starts no process; the file helpers under src/files/ name
//! nothing above them and keep no global.

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

// The rooms of src/gpu/: `host/` (the parent: the runner, the worker client, the
// protocol, NVML), `worker/` (the child), and the files both sides share at the top:
// `wire.rs` (the worker's command line and messages), `driver.rs` (the CUDA driver's
// probes) and `nvrtc.rs` (the compiler). `mod.rs` is the façade the rest of the crate
// calls. What a recipe says is src/recipe/'s, below the GPU side (ROOM_ORDER). The
// arrows point one way: host and worker use the shared files, never each other (the
// host starts a worker by the command line in wire.rs, and only commands/mod.rs names
// the worker's entry point); the shared files use no other room.

/// The rooms a room's files may name besides their own.
const GPU_ROOMS: &[(&str, &[&str])] = &[
    ("wire", &[]),
    ("driver", &[]),
    ("nvrtc", &[]),
    ("host", &["wire", "driver"]),
    ("worker", &["wire", "driver", "nvrtc"]),
    ("(mod.rs)", &["nvrtc"]),
];

/// A file's room: its folder under src/gpu/, its name for a file at the top.
fn gpu_room(file: &std::path::Path) -> String {
    let rel = file.strip_prefix(common::repo().join("src/gpu")).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    match first.strip_suffix(".rs") {
        Some("mod") => "(mod.rs)".to_string(),
        Some(name) => name.to_string(),
        None => first.into_owned(),
    }
}

/// The crate's sources.
fn src() -> std::path::PathBuf {
    common::repo().join("src")
}

/// The module path of a file under `src` (`src/gpu/host/runner.rs` → gpu, host, runner).
fn module_of(src: &std::path::Path, file: &std::path::Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut segs: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs
}

/// The file that holds module `segs`, or the nearest module above it that has one (an
/// item's path ends in the file of the module that declares it), with how many of
/// `segs` name that module.
fn file_of(
    src: &std::path::Path,
    segs: &[String],
    inline_tests: (&[String], &std::path::Path),
) -> (std::path::PathBuf, usize) {
    for n in (0..=segs.len()).rev() {
        let s = &segs[..n];
        // A `mod tests` inside a file is that file.
        if s.last().is_some_and(|x| x == "#tests") && &s[..n - 1] == inline_tests.0 {
            return (inline_tests.1.to_path_buf(), n);
        }
        let dir = src.join(s.join("/"));
        for candidate in [dir.with_extension("rs"), dir.join("mod.rs")] {
            if !s.is_empty() && candidate.is_file() {
                return (candidate, n);
            }
        }
    }
    (src.join("lib.rs"), 0)
}

/// A path as named in module `here` (`crate::a::b`, `super::b`, `self::b`, a `use` of a
/// bare name) made a path from the crate's root.
fn from_root(path: Vec<String>, here: &[String]) -> Vec<String> {
    let mut segs = path.into_iter().peekable();
    let mut base = match segs.peek().map(String::as_str) {
        Some("crate") => Vec::new(),
        _ => here.to_vec(),
    };
    if segs.peek().is_some_and(|s| s == "crate" || s == "self") {
        segs.next();
    }
    while segs.peek().is_some_and(|s| s == "super") {
        segs.next();
        base.pop();
    }
    base.extend(segs.filter(|s| s != "self"));
    base
}

/// The items `file` re-exports (`pub use runs::Shape;`, `pub(crate) use …`), each as the
/// name it is known by and the path, from the crate's root, of what it stands for.
fn reexports(src: &std::path::Path, file: &std::path::Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(file).unwrap();
    let here = module_of(src, file);
    let mut found = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at + line.len() - line.trim_start().len();
        at += line.len();
        let Some(rest) = ["pub use ", "pub(crate) use "]
            .iter()
            .find_map(|p| text[start..].strip_prefix(p))
        else {
            continue;
        };
        // The statement, to its `;` (a group may run over several lines).
        let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
        for (path, _) in paths_named(&format!("use {statement};")) {
            if let Some(name) = path.last().filter(|n| *n != "self" && *n != "*") {
                found.push((name.clone(), from_root(path.clone(), &here)));
            }
        }
    }
    found
}

/// The file a path from the crate's root depends on: the file of the module that holds
/// the item it names, or, where that module only re-exports the item (`model/mod.rs`'s
/// `pub use runs::Shape`), the file that defines it (`model/runs.rs`): a module that
/// gathers its children's items for its users is not what they depend on.
fn target_of(
    src: &std::path::Path,
    segs: &[String],
    inline_tests: (&[String], &std::path::Path),
) -> std::path::PathBuf {
    let (file, n) = file_of(src, segs, inline_tests);
    if let Some(item) = segs.get(n)
        && let Some((_, from)) = reexports(src, &file)
            .into_iter()
            .find(|(name, _)| name == item)
        && from.as_slice() != segs
    {
        let mut from = from;
        from.extend(segs[n + 1..].iter().cloned());
        return target_of(src, &from, inline_tests);
    }
    file
}

/// The paths a file names from `crate::`, `self::` or `super::` or from a module it
/// declares (`mod long;` then `long::parse`) anywhere in its code, and in its `use`
/// lines, each group `a::{b, c::d}` spread into whole paths, as (path, whether it sits in
/// the file's `mod tests`).
fn paths_named(text: &str) -> Vec<(Vec<String>, bool)> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    // The modules the file declares in files of their own.
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = ["pub mod ", "pub(crate) mod ", "mod "]
                .iter()
                .find_map(|p| l.strip_prefix(p))?;
            l.strip_suffix(';').map(str::to_string)
        })
        .collect();
    let chars: Vec<char> = code.chars().collect();
    // Where the file's `mod tests` starts, counted in characters as the reading goes.
    let tests_at = code
        .find("mod tests {")
        .map_or(chars.len(), |at| code[..at].chars().count());
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // Reads `a::b::{c, d::e}` from `at`; returns the paths and where it ended.
    fn tree(chars: &[char], mut at: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let mut path = prefix;
        loop {
            while at < chars.len() && chars[at].is_whitespace() {
                at += 1;
            }
            if at < chars.len() && chars[at] == '{' {
                let mut out = Vec::new();
                at += 1;
                loop {
                    let (paths, end) = tree(chars, at, path.clone());
                    out.extend(paths);
                    at = end;
                    while at < chars.len() && chars[at].is_whitespace() {
                        at += 1;
                    }
                    match chars.get(at) {
                        Some(',') => at += 1,
                        Some('}') => return (out, at + 1),
                        _ => return (out, at),
                    }
                    while at < chars.len() && chars[at].is_whitespace() {
                        at += 1;
                    }
                    if chars.get(at) == Some(&'}') {
                        return (out, at + 1);
                    }
                }
            }
            let start = at;
            while at < chars.len() && ident(chars[at]) {
                at += 1;
            }
            if at > start {
                path.push(chars[start..at].iter().collect());
            }
            if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
                at += 2;
                continue;
            }
            return (vec![path], at);
        }
    }
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let before = at.checked_sub(1).map(|i| chars[i]);
        let boundary = before.is_none_or(|c| !ident(c) && c != ':');
        let rest: String = chars[at..chars.len().min(at + 8)].iter().collect();
        let rooted = ["crate::", "self::", "super::"]
            .iter()
            .any(|r| rest.starts_with(r));
        let used = rest.starts_with("use ") && {
            let after = chars[at + 4..].iter().take_while(|c| ident(**c)).count();
            after > 0
        };
        let word: String = chars[at..].iter().take_while(|c| ident(**c)).collect();
        let child = chars.get(at + word.len()) == Some(&':')
            && chars.get(at + word.len() + 1) == Some(&':')
            && children.contains(&word);
        if boundary && (rooted || used || child) {
            let start = if used { at + 4 } else { at };
            let (paths, end) = tree(&chars, start, Vec::new());
            let in_tests = at >= tests_at;
            for mut p in paths {
                // A `use` of a bare name is relative to the module itself; a child's name
                // too, in the tests the parent's module (which their `use super::*`
                // brings in).
                if used && !["crate", "self", "super"].contains(&p[0].as_str()) {
                    p.insert(0, "self".to_string());
                } else if child && !used {
                    p.insert(0, if in_tests { "super" } else { "self" }.to_string());
                }
                found.push((p, in_tests));
            }
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    found
}

/// Each file under `dir` (a folder of the crate whose sources are `src`) with the other
/// files under `dir` that it names.
fn imports_under(
    src: &std::path::Path,
    dir: &std::path::Path,
) -> Vec<(std::path::PathBuf, Vec<std::path::PathBuf>)> {
    rust_files(dir)
        .into_iter()
        .map(|f| {
            let module = module_of(src, &f);
            let mut targets = Vec::new();
            for (path, in_tests) in paths_named(&std::fs::read_to_string(&f).unwrap()) {
                let mut here = module.clone();
                if in_tests {
                    here.push("#tests".into());
                }
                let target = target_of(src, &from_root(path, &here), (&module, &f));
                if target != f && target.starts_with(dir) && !targets.contains(&target) {
                    targets.push(target);
                }
            }
            targets.sort();
            (f, targets)
        })
        .collect()
}

/// The import circles among the files under `dir`, each as `a → b → … → a`, the files
/// named from `src`.
fn import_circles(src: &std::path::Path, dir: &std::path::Path) -> Vec<String> {
    let graph = imports_under(src, dir);
    let index = |p: &std::path::Path| graph.iter().position(|(f, _)| f == p);
    let name = |i: usize| graph[i].0.strip_prefix(src).unwrap().display().to_string();
    // Depth-first; a file met again on the current path closes a circle.
    fn visit(
        i: usize,
        next: &dyn Fn(usize) -> Vec<usize>,
        state: &mut [u8],
        path: &mut Vec<usize>,
        circles: &mut Vec<Vec<usize>>,
    ) {
        state[i] = 1;
        path.push(i);
        for j in next(i) {
            match state[j] {
                0 => visit(j, next, state, path, circles),
                1 => {
                    let from = path.iter().position(|&k| k == j).unwrap();
                    circles.push(path[from..].to_vec());
                }
                _ => {}
            }
        }
        path.pop();
        state[i] = 2;
    }
    let next = |i: usize| -> Vec<usize> { graph[i].1.iter().filter_map(|t| index(t)).collect() };
    let mut state = vec![0u8; graph.len()];
    let mut circles = Vec::new();
    for i in 0..graph.len() {
        if state[i] == 0 {
            visit(i, &next, &mut state, &mut Vec::new(), &mut circles);
        }
    }
    circles
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|&i| name(i)).collect();
            names.push(name(c[0]));
            names.join(" → ")
        })
        .collect()
}

#[test]
fn the_files_under_src_gpu_import_one_another_without_a_circle() {
    assert_eq!(
        import_circles(&src(), &src().join("gpu")),
        Vec::<String>::new()
    );
}

/// No file under src/ imports, through others, a file that imports it: between the
/// rooms the arrows point one way (ncu → model → analysis → report and the explorer,
/// files/ under them all), and inside a room what a parent module and its children share
/// lives in a child of its own, the parent only gathering it.
#[test]
fn the_files_under_src_import_one_another_without_a_circle() {
    assert_eq!(import_circles(&src(), &src()), Vec::<String>::new());
}

/// The crate's rooms from the bottom up: a room's files may name a room below it, never
/// one above. The GPU side sits above the analysis because its stopping rule takes the
/// same interval as the speed verdicts (`analysis::speed`), so the rule is said once.
const ROOM_ORDER: &[&str] = &[
    "seeded",
    "files",
    "text_width",
    "process",
    "ncu",
    "kinds",
    "model",
    "analysis",
    "nsight",
    "recipe",
    "gpu",
    "store_jobs",
    "report",
    "tui",
    "doctor",
    "cli",
    "commands",
];

/// A file's room: its folder or file right under src/ (lib.rs and main.rs: none).
fn room_of(src: &std::path::Path, file: &std::path::Path) -> Option<String> {
    let first = file.strip_prefix(src).ok()?.components().next()?;
    let name = first.as_os_str().to_string_lossy();
    let room = name.strip_suffix(".rs").unwrap_or(&name).to_string();
    (room != "lib" && room != "main").then_some(room)
}

/// Each arrow from a room to one at or above it in [`ROOM_ORDER`] (or to a room the
/// order does not name), as `room: file → file`.
fn arrows_upward(src: &std::path::Path) -> Vec<String> {
    let rank = |room: &str| ROOM_ORDER.iter().position(|r| *r == room);
    let mut wrong = Vec::new();
    for (file, targets) in imports_under(src, src) {
        let Some(from) = room_of(src, &file) else {
            continue;
        };
        for t in targets {
            let Some(to) = room_of(src, &t) else { continue };
            if from == to {
                continue;
            }
            let fine = matches!((rank(&from), rank(&to)), (Some(a), Some(b)) if b < a);
            if !fine {
                wrong.push(format!(
                    "{from} names {to}: {} → {}",
                    file.strip_prefix(src).unwrap().display(),
                    t.strip_prefix(src).unwrap().display()
                ));
            }
        }
    }
    wrong
}

#[test]
fn every_room_names_only_rooms_below_it() {
    assert_eq!(arrows_upward(&src()), Vec::<String>::new());
}

#[test]
fn the_room_order_check_sees_an_arrow_upward() {
    // A planted crate whose model names the report: the arrow points up.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("model")).unwrap();
    std::fs::create_dir_all(src.join("report")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod model;\npub mod report;\n").unwrap();
    std::fs::write(src.join("model/mod.rs"), "use crate::report::Table;\n").unwrap();
    std::fs::write(
        src.join("report/mod.rs"),
        "pub struct Table;\nuse crate::model;\n",
    )
    .unwrap();
    assert_eq!(
        arrows_upward(&src),
        ["model names report: model/mod.rs → report/mod.rs"]
    );
}

#[test]
fn host_and_worker_use_the_recipe_and_the_wire_never_each_other() {
    let mut wrong = Vec::new();
    for (file, targets) in imports_under(&src(), &src().join("gpu")) {
        let room = gpu_room(&file);
        let allowed = GPU_ROOMS
            .iter()
            .find(|(r, _)| *r == room)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("{}: in no room of GPU_ROOMS", file.display()));
        for t in targets {
            let to = gpu_room(&t);
            if to != room && !allowed.contains(&to.as_str()) {
                let rel = |p: &std::path::Path| {
                    let src = common::repo().join("src");
                    p.strip_prefix(src).unwrap().display().to_string()
                };
                wrong.push(format!("{} ({room}) uses {} ({to})", rel(&file), rel(&t)));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_import_reading_sees_the_arrows_it_should() {
    // The reading itself, on arrows known to be there: were it blind, the tests above
    // would pass on anything.
    let graph = imports_under(&src(), &src());
    let uses = |from: &str, to: &str| {
        graph
            .iter()
            .any(|(f, t)| *f == src().join(from) && t.contains(&src().join(to)))
    };
    assert!(uses("gpu/host/runner.rs", "gpu/wire.rs"));
    assert!(uses("gpu/host/runner.rs", "recipe/baselines.rs"));
    assert!(uses("gpu/host/runner.rs", "gpu/host/client.rs"));
    assert!(uses("gpu/host/window.rs", "gpu/host/client.rs"));
    assert!(uses("gpu/worker/mod.rs", "gpu/worker/problem.rs"));
    assert!(uses("gpu/worker/device.rs", "recipe/mod.rs"));
    assert!(uses("gpu/worker/baselines/unfused.rs", "recipe/mod.rs"));
    assert!(uses("gpu/mod.rs", "recipe/mod.rs"));
    assert!(uses("recipe/folders.rs", "recipe/mod.rs"));
    assert!(uses("gpu/host/window.rs", "gpu/host/protocol.rs"));
    assert!(!uses("recipe/mod.rs", "gpu/worker/mod.rs"));
}

#[test]
fn the_import_reading_follows_a_reexport_to_the_file_that_defines_the_item() {
    // A planted crate: `shapes/mod.rs` only declares its children and re-exports their
    // items; `ladder.rs` names `Shape` through its parent, `report.rs` names `Ladder`
    // through the crate's path, and `ladder.rs` names `report.rs` back: one real circle.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("shapes")).unwrap();
    for (file, text) in [
        (
            "lib.rs",
            // A module it declares, named bare in its code.
            "pub mod report;\npub mod shapes;\n\npub fn width() -> usize {\n    report::width()\n}\n",
        ),
        (
            "shapes/mod.rs",
            "mod ladder;\nmod runs;\n\npub use ladder::Ladder;\npub use runs::{Shape, Status};\n",
        ),
        (
            "shapes/runs.rs",
            // Its tests' `use super::*` names the file itself, however many characters
            // of several bytes stand before them.
            "pub struct Shape;\npub enum Status {}\npub const UNIT: &str = \"µs ← ← ← ← ← ← ← ← ← ←\";\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        (
            "shapes/ladder.rs",
            "use super::Shape;\n\npub struct Ladder(Shape);\n\nfn w() -> usize {\n    crate::report::width()\n}\n",
        ),
        (
            "report.rs",
            "use crate::shapes::{Ladder, Status};\n\npub fn width() -> usize {\n    0\n}\n",
        ),
    ] {
        std::fs::write(src.join(file), text).unwrap();
    }
    let graph = imports_under(&src, &src);
    let targets = |from: &str| -> Vec<String> {
        let (_, t) = graph.iter().find(|(f, _)| *f == src.join(from)).unwrap();
        t.iter()
            .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
            .collect()
    };
    // The children's items are their files', not the parent's that re-exports them.
    assert_eq!(targets("shapes/ladder.rs"), ["report.rs", "shapes/runs.rs"]);
    assert_eq!(targets("report.rs"), ["shapes/ladder.rs", "shapes/runs.rs"]);
    assert_eq!(
        targets("shapes/mod.rs"),
        ["shapes/ladder.rs", "shapes/runs.rs"]
    );
    assert_eq!(targets("shapes/runs.rs"), Vec::<String>::new());
    assert_eq!(targets("lib.rs"), ["report.rs"]);
    // So the parent and its children make no circle, and the real one is still seen.
    assert_eq!(
        import_circles(&src, &src),
        ["report.rs → shapes/ladder.rs → report.rs"]
    );
}

/// The model holds data and reads files; it starts no process: no file under src/model
/// names the process module, ncu's command line or std's Command (a report's pages are
/// exported by `nsight::reports` before the model reads them).
#[test]
fn the_model_starts_no_process() {
    let dir = common::repo().join("src/model");
    let mut found = Vec::new();
    for f in rust_files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for what in [
                "crate::process",
                "crate::nsight",
                "process::Command",
                "Command::new",
            ] {
                if code.contains(what) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

/// The named fields of the structs of `text` (`Struct.field`), and its functions'
/// names (`fn name`), read from the code (not the comments).
fn fields_and_functions(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let indent = &code[..code.len() - code.trim_start().len()];
        if let Some((name, at)) = &open {
            if code.trim_end() == format!("{at}}}") {
                open = None;
            } else if let Some((field, _)) = code.trim().split_once(':')
                && let Some(field) = field.strip_prefix("pub").map_or(Some(field), |f| {
                    f.trim_start().strip_prefix("(crate)").or(Some(f))
                })
                && !field.trim().is_empty()
                && field
                    .trim()
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_')
            {
                found.push(format!("{name}.{}", field.trim()));
            }
            continue;
        }
        let words: Vec<&str> = code.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "struct")
            && code.trim_end().ends_with('{')
            && let Some(name) = words.get(i + 1)
        {
            let name: String = name.chars().take_while(|c| c.is_alphanumeric()).collect();
            open = Some((name, indent.to_string()));
        } else if let Some(i) = words.iter().position(|w| *w == "fn")
            && let Some(name) = words.get(i + 1)
        {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(format!("fn {name}"));
        }
    }
    found
}

/// Which run results are shown is the caller's choice (`analysis::Shown`: a command's
/// `--shape`, the explorer's `S`), passed to the analysis and the reports: no struct
/// under src/model holds a shown shape or a selection, no function of the model picks
/// the shown result, and nothing there reads such a field.
#[test]
fn the_model_holds_no_shown_shape() {
    let said = |name: &str| {
        ["shown", "select", "chosen"]
            .iter()
            .any(|w| name.contains(w))
    };
    let mut found = Vec::new();
    for f in rust_files(&common::repo().join("src/model")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for name in fields_and_functions(&text) {
            if said(&name) {
                found.push(format!("{}: {name}", f.display()));
            }
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if [".shown", ".selected", ".selection"]
                .iter()
                .any(|w| code.contains(w))
            {
                found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

/// The reading above sees the model's fields and functions (a reading that saw none
/// would pass whatever the model held).
#[test]
fn the_field_reading_sees_the_ladders_fields() {
    let text = std::fs::read_to_string(common::repo().join("src/model/ladder.rs")).unwrap();
    let found = fields_and_functions(&text);
    for want in [
        "Ladder.reference_shape",
        "Ladder.versions",
        "Version.runs",
        "fn measured_shapes",
        "fn reference_run_shape",
    ] {
        assert!(found.iter().any(|f| f == want), "{want}: {found:?}");
    }
    let planted = "pub struct Ladder {\n    pub name: String,\n    pub shown: Option<RunShape>,\n}\n\nimpl Ladder {\n    pub fn shown_run(&self) {}\n}\n";
    assert_eq!(
        fields_and_functions(planted),
        ["Ladder.name", "Ladder.shown", "fn shown_run"]
    );
}

/// src/files/ is the bottom of the crate: its rooms name no other module of it (only one
/// another), and keep no process-wide state. No static holds an atomic, a lock or
/// anything mutable (the size limits are values the commands hand down), save the fault
/// points' counters, which exist only in a build with the `fault-injection` feature.
#[test]
fn the_file_helpers_name_nothing_above_them_and_keep_no_global() {
    let dir = common::repo().join("src/files");
    let mut found = Vec::new();
    for f in rust_files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (path, _) in paths_named(&text) {
            if path[0] == "crate" && path.get(1).is_some_and(|m| m != "files") {
                found.push(format!(
                    "{} names crate::{}",
                    f.display(),
                    path[1..].join("::")
                ));
            }
        }
        // The fault points' module, compiled only with the feature.
        let gated = text
            .find("#[cfg(feature = \"fault-injection\")]\nmod points {")
            .map(|at| (at, at + text[at..].find("\n}\n").unwrap_or(text.len() - at)));
        let mut at = 0;
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let state = ["Atomic", "Mutex", "RwLock", "Cell", "static mut"]
                .iter()
                .any(|w| code.contains(w));
            let in_gated = gated.is_some_and(|(from, to)| at > from && at < to);
            if code.contains("static ") && state && !in_gated {
                found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
            at += line.len() + 1;
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn the_file_helpers_check_sees_a_global_where_there_is_one() {
    // The check above, on the one place statics are allowed: were it blind, it would
    // pass on anything.
    let text = std::fs::read_to_string(common::repo().join("src/files/fault.rs")).unwrap();
    assert!(text.contains("#[cfg(feature = \"fault-injection\")]\nmod points {"));
    assert!(text.contains("static FAULT_STEP: AtomicU64"));
}

/// Words that belong to one problem kind: its names, its flags, its formulas, its
/// baselines. The generic code (everything but the kind's own files) names none of them.
const KIND_WORDS: &[(&str, &[&str])] = &[
    (
        "attention",
        &[
            "attention",
            "causal",
            "HEAD_DIM",
            "head dim",
            "head_dim",
            "softmax",
            "sdpa",
            "SDPA",
            "\"fa2\"",
            "mem-efficient",
            "unfused",
            "B,H,S,D",
            "4*B*H",
            "\"Q\"",
            "\"V\"",
            "cudnn",
            "cuDNN",
            "flash",
        ],
    ),
    (
        "gemm",
        &[
            "gemm",
            "GEMM",
            "M,N,K",
            "\"Bt\"",
            "torch-matmul",
            "matmul",
            "2*M*N*K",
        ],
    ),
];

/// The files that are a kind's own: its module under src/kinds/, and the built-in
/// baselines' device code under src/gpu/worker/baselines/.
fn kind_files() -> Vec<std::path::PathBuf> {
    let mut own: Vec<std::path::PathBuf> = ["kinds/attention.rs", "kinds/gemm.rs"]
        .iter()
        .map(|f| src().join(f))
        .collect();
    own.extend(rust_files(&src().join("gpu/worker/baselines")));
    own
}

/// Lines of generic code that may name a kind, each with why.
const NAMED_ON_PURPOSE: &[(&str, &str, &str)] = &[
    (
        "kinds/mod.rs",
        "pub mod ",
        "the registry declares every kind's module",
    ),
    ("kinds/mod.rs", "KINDS", "the registry lists every kind"),
    (
        "kinds/mod.rs",
        "attention::Attention",
        "files of before kinds were attention's",
    ),
    (
        "gpu/worker/mod.rs",
        "pub mod baselines",
        "the built-in baselines' folder",
    ),
    (
        "recipe/folders.rs",
        "DEFAULT_LADDER",
        "the bundled ladder run by default is data, a folder name",
    ),
    (
        "doctor.rs",
        "cudnn",
        "doctor checks the machine for what the bundled baselines' scripts need",
    ),
    (
        "doctor.rs",
        "cuDNN",
        "doctor checks the machine for what the bundled baselines' scripts need",
    ),
    (
        "model/runs.rs",
        "cudnn",
        "runs.json files of before the library map name cuDNN's version in a field of its own",
    ),
    (
        "analysis/catalogue.rs",
        "softmax",
        "the SASS explanations give examples from the bundled ladder",
    ),
    (
        "analysis/catalogue.rs",
        "attention",
        "the SASS explanations give examples from the bundled ladder",
    ),
];

/// The lines of `text` (the file `rel` under src/) that name a kind's word, outside
/// comments and test code, as `file:line: kind "word": text`.
fn kind_words_in(rel: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    // Test code may name a kind (it tests the generic code on one): an item under
    // `#[cfg(test)]` runs to the next closing brace at the start of a line.
    let mut in_test = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            in_test = true;
        }
        if in_test {
            in_test = line != "}";
            continue;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (kind, words) in KIND_WORDS {
            for w in words.iter().filter(|w| line.contains(*w)) {
                let allowed = NAMED_ON_PURPOSE
                    .iter()
                    .any(|(f, needle, _)| *f == rel && line.contains(needle));
                if !allowed {
                    found.push(format!("{rel}:{}: {kind} {w:?}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn the_generic_code_names_no_problem_kind() {
    let own = kind_files();
    let mut found = Vec::new();
    for p in rust_files(&src()) {
        if own.contains(&p) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let rel = p
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        found.extend(kind_words_in(&rel, &text));
    }
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn the_kind_word_check_sees_a_kind_named_in_generic_code() {
    // Were the reading blind, the test above would pass on anything.
    let planted = "/// causal in a comment is fine\n\
                   fn flops(s: &Shape) -> f64 { if s.causal { 0.5 } else { 1.0 } }\n\
                   const K: &str = \"M,N,K\";\n\
                   #[cfg(test)]\nmod tests {\n    const C: bool = causal;\n}\n\
                   fn after() { softmax(); }\n";
    let found = kind_words_in("gpu/host/runner.rs", planted);
    assert_eq!(
        found,
        [
            "gpu/host/runner.rs:2: attention \"causal\": fn flops(s: &Shape) -> f64 { if s.causal { 0.5 } else { 1.0 } }",
            "gpu/host/runner.rs:3: gemm \"M,N,K\": const K: &str = \"M,N,K\";",
            "gpu/host/runner.rs:8: attention \"softmax\": fn after() { softmax(); }",
        ]
    );
    // The allowed lines are allowed only where named.
    assert!(kind_words_in("kinds/mod.rs", "pub mod attention;\n").is_empty());
    assert_eq!(
        kind_words_in("model/runs.rs", "pub mod attention;\n").len(),
        1
    );
}

/// The views sit below the explorer's state: no file under src/tui/views/ names
/// `tui/state.rs` (the `App`), the frame or the explorer's loop; the frame
/// (`tui/frame.rs`) draws them from the `App` and hands each its `Scene`.
#[test]
fn no_view_names_the_explorer_s_state() {
    let views = src().join("tui/views");
    let above = [
        src().join("tui/state.rs"),
        src().join("tui/frame.rs"),
        src().join("tui/mod.rs"),
    ];
    let graph = imports_under(&src(), &src());
    let wrong: Vec<String> = graph
        .iter()
        .filter(|(f, _)| f.starts_with(&views))
        .flat_map(|(f, targets)| {
            targets
                .iter()
                .filter(|t| above.contains(t))
                .map(move |t| format!("{} → {}", f.display(), t.display()))
        })
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
    // The reading sees the frame's arrows down into the views and up to the state.
    let frame = src().join("tui/frame.rs");
    let from_frame = &graph.iter().find(|(f, _)| *f == frame).unwrap().1;
    assert!(from_frame.contains(&src().join("tui/state.rs")));
    assert!(from_frame.contains(&src().join("tui/views/timeline.rs")));
}
