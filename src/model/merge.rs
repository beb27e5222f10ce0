//! Merging pages exported from one report into one profile per kernel launch.
//!
//! Pages given together describe the same launches: a launch is matched on its launch ID
//! and kernel name (not the process: pages may come from separate ncu runs of the same
//! program); the source page carries only the kernel name, so it goes to
//! the first profile of that name that has no source page yet. A profile takes one page
//! of each kind: a second raw page of the same launch ID starts a new profile (two
//! reports of the same kernel, e.g. two versions, each launched once).

use super::Profile;
use crate::ncu::{Export, KernelRecord, Page, PageKind};

pub fn merge_exports(exports: Vec<Export>) -> Vec<Profile> {
    let mut profiles: Vec<Profile> = Vec::new();
    for export in exports {
        let kind = export.kind;
        for record in export.records {
            let slot = profiles
                .iter()
                .position(|p| accepts(p, kind, &record))
                .unwrap_or_else(|| {
                    profiles.push(Profile {
                        kernel: record.kernel.clone(),
                        ..Profile::default()
                    });
                    profiles.len() - 1
                });
            add(&mut profiles[slot], kind, &export.path, record);
        }
    }
    profiles
}

fn accepts(p: &Profile, kind: PageKind, r: &KernelRecord) -> bool {
    let same = |a: Option<u64>, b: Option<u64>| a.is_none() || b.is_none() || a == b;
    let free = match kind {
        // Details, --metrics and summary pages all fill the long-layout rows.
        PageKind::Details | PageKind::Metrics | PageKind::Summary => {
            !p.has_page(PageKind::Details)
                && !p.has_page(PageKind::Metrics)
                && !p.has_page(PageKind::Summary)
        }
        other => !p.has_page(other),
    };
    free && same_kernel(&p.kernel, &r.kernel) && same(p.launch_id, r.launch_id)
}

fn add(p: &mut Profile, kind: PageKind, path: &std::path::Path, r: KernelRecord) {
    p.launch_id = p.launch_id.or(r.launch_id);
    p.process_id = p.process_id.or(r.process_id);
    p.launch.merge(&r.launch);
    p.pages.push((kind, path.to_path_buf()));
    match r.page {
        Page::Metrics { metrics, rules } => {
            p.details.extend(metrics);
            p.rules.extend(rules);
        }
        Page::Raw(raw) => p.raw = Some(raw),
        Page::Source(listing) => p.source = Some(listing),
    }
}

/// Whether two spellings name the same kernel. The source page demangles differently
/// from the other pages (`ns::k<(int)128>` against `k<128>`), so names are compared
/// without namespace qualifiers, literal casts and spaces.
pub fn same_kernel(a: &str, b: &str) -> bool {
    a == b || canonical(a) == canonical(b)
}

fn canonical(name: &str) -> String {
    let name = super::without_anonymous_namespaces(name.trim());
    let mut out = String::with_capacity(name.len());
    let mut rest = name.as_str();
    while let Some(c) = rest.chars().next() {
        if let Some(after) = skip_cast(rest).or_else(|| skip_qualifier(rest)) {
            rest = after;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            // Copy a whole identifier so that its tail is never read as a qualifier.
            let len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if !c.is_whitespace() {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `(int)128` → `128`: a parenthesised type name right before a literal.
fn skip_cast(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('(')?;
    let end = inner.find(')')?;
    let ty = &inner[..end];
    let after = &inner[end + 1..];
    let literal = after.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    (!ty.is_empty() && ty.chars().all(|c| c.is_ascii_alphabetic() || c == ' ') && literal)
        .then_some(after)
}

/// `ns::x` → `x` (anonymous namespaces are removed before).
fn skip_qualifier(s: &str) -> Option<&str> {
    let len = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    (len > 0).then(|| s[len..].strip_prefix("::"))?
}

#[cfg(test)]
mod tests {
    use super::same_kernel;

    #[test]
    fn source_page_spelling_matches() {
        assert!(same_kernel(
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, 0, 0, half_t, Flash_kernel_traits<128, 128, 64, 4, half_t>>, 0, 0, 0, 0, 1, 1, 0, 0>(Flash_fwd_params)",
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::half_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::half_t>>, (bool)0, (bool)0, (bool)0, (bool)0, (bool)1, (bool)1, (bool)0, (bool)0>(pytorch_flash::Flash_fwd_params)"
        ));
        assert!(same_kernel(
            "void at::<unnamed>::k<float>(int)",
            "void k<float>(int)"
        ));
        assert!(!same_kernel(
            "mm_naive(const float *)",
            "mm_tiled(const float *)"
        ));
        assert!(!same_kernel("k<128>(int)", "k<64>(int)"));
    }
}
