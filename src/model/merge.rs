//! Merging the pages of one kernel launch into one profile.
//!
//! Pages of one launch become one profile, whatever their kinds and however many of
//! each: the same process, launch ID and kernel (the details page, a `--metrics` export,
//! a single-section export, the raw page twice in two units …); a summary page of a
//! kernel launched once in that process, with the same launch configuration; a source
//! page listing the same instructions with the same samples (it carries only the kernel
//! name).
//!
//! Pages given together without that identity (separate ncu runs of one program, a
//! source page) still describe the same launches: a page then goes to the first
//! profile of that kernel and a compatible launch ID that has no page of its kind yet.
//! A second page of a kind a profile holds starts a new profile (two reports of the
//! same kernel, e.g. two versions, each launched once). Pages of different processes
//! (two ncu runs) merged so carry a warning on the profile naming both runs and their
//! durations: their figures are of two launches, which never measure alike.

use super::Profile;
use super::SourcePage;
use crate::ncu::{Export, Page, PageKind};
use std::collections::HashMap;

pub fn merge_exports(exports: Vec<Export>) -> Vec<Profile> {
    merge_pages(exports.into_iter().flat_map(pages_of))
}

/// The pages of an export, one profile each, for [`merge_pages`].
pub fn pages_of(export: Export) -> impl Iterator<Item = Profile> {
    let (kind, path) = (export.kind, export.path);
    export
        .records
        .into_iter()
        .map(move |record| page_profile(kind, &path, record))
}

/// A source page known by its summary alone (see [`super::source`]), as a page.
pub fn source_page(kernel: String, path: &std::path::Path, page: SourcePage) -> Profile {
    Profile {
        kernel,
        pages: vec![(PageKind::Source, path.to_path_buf())],
        source: Some(page),
        ..Profile::default()
    }
}

/// A page (or launch) being merged, with what the comparisons need worked out once: a
/// file of a thousand launches compares each with every launch before it.
struct Part {
    profile: Profile,
    /// The kernel name as pages are matched by ([`canonical`]).
    kernel: String,
    /// The page classes it holds, one bit each (see [`class_bit`]).
    classes: u8,
}

impl Part {
    fn classes(p: &Profile) -> u8 {
        p.pages.iter().fold(0, |m, (k, _)| m | class_bit(*k))
    }

    fn absorb(&mut self, from: Part) {
        self.classes |= from.classes;
        if let Some(w) = other_run(&self.profile, &from.profile) {
            self.profile.warnings.push(w);
        }
        absorb(&mut self.profile, from.profile);
    }
}

/// The launches found so far. Those of known process and launch IDs are found by them,
/// so that a file of a thousand launches is not searched a thousand times: a page with
/// both IDs can only be of a launch with the same IDs, or of one that lacks some.
#[derive(Default)]
struct Launches {
    all: Vec<Part>,
    /// Launches whose process and launch IDs are known, by them, in order.
    by_id: HashMap<(u64, u64), Vec<usize>>,
    /// The others, in order.
    others: Vec<usize>,
}

impl Launches {
    fn ids(p: &Profile) -> Option<(u64, u64)> {
        Some((p.process_id?, p.launch_id?))
    }

    /// The first launch `page` is a page of.
    fn find(&self, page: &Part) -> Option<usize> {
        let of = |i: &&usize| same_launch(&self.all[**i], page);
        match Self::ids(&page.profile) {
            Some(id) => {
                let same_ids = self.by_id.get(&id).and_then(|v| v.iter().find(of));
                let others = self.others.iter().find(of);
                same_ids.into_iter().chain(others).min().copied()
            }
            None => (0..self.all.len()).find(|i| of(&i)),
        }
    }

    fn add(&mut self, page: Part) {
        let i = self.all.len();
        match Self::ids(&page.profile) {
            Some(id) => self.by_id.entry(id).or_default().push(i),
            None => self.others.push(i),
        }
        self.all.push(page);
    }

    fn absorb(&mut self, i: usize, page: Part) {
        let before = Self::ids(&self.all[i].profile);
        self.all[i].absorb(page);
        if before.is_none()
            && let Some(id) = Self::ids(&self.all[i].profile)
        {
            // The page gave it the IDs it lacked.
            self.others.retain(|&j| j != i);
            let same = self.by_id.entry(id).or_default();
            same.insert(same.partition_point(|&j| j < i), i);
        }
    }
}

/// Merges pages, one profile each, into one profile per launch (the rules above).
pub fn merge_pages(pages: impl IntoIterator<Item = Profile>) -> Vec<Profile> {
    // Pages of one launch, by identity.
    let mut launches = Launches::default();
    // A page's launches are of a few kernels: each name is worked out once.
    let mut names: HashMap<String, String> = HashMap::new();
    for page in pages {
        let kernel = names
            .entry(page.kernel.clone())
            .or_insert_with(|| canonical(&page.kernel))
            .clone();
        let page = Part {
            kernel,
            classes: Part::classes(&page),
            profile: page,
        };
        match launches.find(&page) {
            Some(i) => launches.absorb(i, page),
            None => launches.add(page),
        }
    }
    // Launches known only in part: completed by the pages they lack, in order.
    let mut profiles: Vec<Part> = Vec::new();
    for launch in launches.all {
        match profiles.iter_mut().find(|p| completes(p, &launch)) {
            Some(p) => p.absorb(launch),
            None => profiles.push(launch),
        }
    }
    profiles.into_iter().map(|p| p.profile).collect()
}

fn page_profile(kind: PageKind, path: &std::path::Path, r: crate::ncu::KernelRecord) -> Profile {
    let mut p = Profile {
        kernel: r.kernel,
        launch_id: r.launch_id,
        process_id: r.process_id,
        launch: r.launch,
        pages: vec![(kind, path.to_path_buf())],
        ..Profile::default()
    };
    match r.page {
        Page::Metrics { metrics, rules } => {
            p.details = metrics;
            p.rules = rules;
        }
        Page::Raw(raw) => p.raw = Some(raw),
        Page::Source(listing) => p.source = Some(SourcePage::read(listing)),
    }
    p
}

/// Whether two profiles are pages of one launch. The identities are compared before
/// the kernel names, which cost more.
fn same_launch(a: &Part, b: &Part) -> bool {
    let (pa, pb) = (&a.profile, &b.profile);
    if let (Some(x), Some(y)) = (&pa.source, &pb.source) {
        return a.kernel == b.kernel && same_listing(x, y);
    }
    let known = |x: Option<u64>, y: Option<u64>| x.is_some() && x == y;
    if !known(pa.process_id, pb.process_id) {
        return false;
    }
    if known(pa.launch_id, pb.launch_id) {
        return a.kernel == b.kernel;
    }
    // A summary page (no launch ID) of a kernel launched once, in the same configuration.
    let once = |p: &Profile| p.launch_id.is_none() && p.launch.invocations == Some(1);
    (once(pa) || once(pb))
        && pa.launch.block.is_some()
        && pa.launch.grid.is_some()
        && (&pa.launch.block, &pa.launch.grid) == (&pb.launch.block, &pb.launch.grid)
        && a.kernel == b.kernel
}

/// The same instructions with the same samples: one report's source page exported
/// twice (`sass`, and `cuda,sass`).
fn same_listing(a: &SourcePage, b: &SourcePage) -> bool {
    let (a, b) = (&a.summary, &b.summary);
    a.instructions == b.instructions && a.fingerprint == b.fingerprint
}

/// Whether `part` can complete `p`: no page kind of `part` in `p` already (details,
/// `--metrics` and summary pages all count as one kind: they fill the same rows), launch
/// IDs that do not differ, and the same kernel.
fn completes(p: &Part, part: &Part) -> bool {
    let compatible = |a: Option<u64>, b: Option<u64>| a.is_none() || b.is_none() || a == b;
    p.classes & part.classes == 0
        && compatible(p.profile.launch_id, part.profile.launch_id)
        && p.kernel == part.kernel
}

/// Why merging `from` into `into` mixes two ncu runs, where their process IDs differ:
/// both runs, their pages and their durations (which differ from run to run).
fn other_run(into: &Profile, from: &Profile) -> Option<String> {
    let (a, b) = (into.process_id?, from.process_id?);
    if a == b {
        return None;
    }
    let side = |p: &Profile, id: u64| {
        let pages: Vec<String> = p
            .pages
            .iter()
            .map(|(k, path)| {
                let name = path.file_name().unwrap_or(path.as_os_str());
                format!("{} page {}", k.name(), name.to_string_lossy())
            })
            .collect();
        let time = p
            .duration_ns()
            .map_or(String::new(), |ns| format!(", {:.2} µs", ns / 1e3));
        format!("process {id} ({}{time})", pages.join(", "))
    };
    Some(format!(
        "pages of two ncu runs merged into one launch of {}: {} and {}; their figures are of different launches (export the pages of one report, or give them apart)",
        into.kernel,
        side(into, a),
        side(from, b)
    ))
}

/// The bit of a page's class: details, `--metrics` and summary pages are one class.
fn class_bit(k: PageKind) -> u8 {
    match k {
        PageKind::Details | PageKind::Metrics | PageKind::Summary | PageKind::NvvpDetails => 1,
        PageKind::Raw => 2,
        PageKind::Source => 4,
    }
}

/// Adds the pages of `from` to `into`; where both hold a value, the first page's stays.
fn absorb(into: &mut Profile, from: Profile) {
    into.launch_id = into.launch_id.or(from.launch_id);
    into.process_id = into.process_id.or(from.process_id);
    into.launch.merge(&from.launch);
    into.pages.extend(from.pages);
    for m in from.details {
        if !into
            .details
            .iter()
            .any(|d| d.section == m.section && d.name == m.name)
        {
            into.details.push(m);
        }
    }
    for r in from.rules {
        if !into
            .rules
            .iter()
            .any(|x| x.section == r.section && x.rule == r.rule && x.description == r.description)
        {
            into.rules.push(r);
        }
    }
    match (&mut into.raw, from.raw) {
        (Some(raw), Some(other)) => raw.absorb(&other),
        (slot @ None, other) => *slot = other,
        _ => {}
    }
    match (&mut into.source, from.source) {
        // A `cuda,sass` listing holds what a `sass` one does, and the CUDA lines.
        (Some(s), Some(other)) if s.summary.cuda_lines == 0 && other.summary.cuda_lines > 0 => {
            *s = other
        }
        (slot @ None, other) => *slot = other,
        _ => {}
    }
}

/// A kernel name as pages are matched by: two spellings name the same kernel when
/// these are equal. The source page demangles differently from the other pages
/// (`ns::k<(int)128>` against `k<128>`), so names are compared without namespace
/// qualifiers, literal casts and spaces.
fn canonical(name: &str) -> String {
    let name = super::kernel_name::without_anonymous_namespaces(name.trim());
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
    use super::canonical;

    fn same_kernel(a: &str, b: &str) -> bool {
        canonical(a) == canonical(b)
    }

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
