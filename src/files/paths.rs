//! Paths as written, worked on without touching the disk: `.` and `..` resolved, one
//! path inside another, one path seen from another.

use std::path::{Component, Path, PathBuf};

/// Resolves `.` and `..` without touching the file system; a `..` that climbs above the
/// start is kept (`../../p` stays `../../p`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` lies in `root`, both as written (no file-system access): `root`
/// itself or below it, with no `..` left after the two are normalized.
pub fn lexically_inside(path: &Path, root: &Path) -> bool {
    let (p, r) = (normalize(path), normalize(root));
    match p.strip_prefix(&r) {
        Ok(rest) => rest.components().all(|c| matches!(c, Component::Normal(_))),
        Err(_) => false,
    }
}

/// `target` as seen from `base` (both relative to the working directory, or both
/// absolute): `kernels/fa/v01.cu` from `profiles/fa` is `../../kernels/fa/v01.cu`.
pub fn relative_path(target: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        normalize(&p)
    };
    let (t, b) = (abs(target), abs(base));
    let common = t
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = PathBuf::new();
    for _ in b.components().skip(common) {
        out.push("..");
    }
    for c in t.components().skip(common) {
        out.push(c);
    }
    out
}

/// `.` for an empty path (the working directory), which the file system does not take.
pub(super) fn non_empty(p: &Path) -> &Path {
    if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("kernels/fa/v01.cu"), Path::new("profiles/fa")),
            Path::new("../../kernels/fa/v01.cu")
        );
        assert_eq!(
            relative_path(Path::new("/a/b/c.cu"), Path::new("/a/p/q")),
            Path::new("../../b/c.cu")
        );
    }

    #[test]
    fn a_second_parent_step_does_not_cancel_the_first() {
        assert_eq!(normalize(Path::new("../../p")), Path::new("../../p"));
        assert_eq!(normalize(Path::new("a/../../p")), Path::new("../p"));
        assert_eq!(normalize(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
    }

    #[test]
    fn a_path_climbing_out_of_its_root_is_not_inside_it() {
        let root = Path::new("profiles/fa");
        assert!(lexically_inside(Path::new("profiles/fa/v1/raw.csv"), root));
        assert!(!lexically_inside(Path::new("profiles/fa/../fb/x"), root));
        assert!(!lexically_inside(Path::new("profiles/fa/../../../x"), root));
        assert!(!lexically_inside(Path::new("../x"), Path::new("")));
    }
}
