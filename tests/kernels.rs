//! The kernel ladders: manifests and launch recipes (no GPU needed), and compilation of
//! every kernel with NVRTC where NVRTC is installed (skipped, with a note, elsewhere).

mod common;

use common::{repo, skip};
use stallscope::files::limits::SizeLimits;
use stallscope::gpu;
use stallscope::kinds::{Kind, Shape};
use stallscope::recipe::KernelRecipe;

/// An attention shape, as `--shape` spells it.
fn att(s: &str) -> Shape {
    Shape::parse(Kind::named("attention").unwrap(), s).unwrap()
}

fn ladders() -> Vec<KernelRecipe> {
    [
        "flash-attention",
        "selftest",
        "experiments",
        "gemm",
        "gemm-experiments",
    ]
    .iter()
    .map(|n| {
        stallscope::recipe::folders::load_recipe(
            &repo().join("kernels").join(n),
            SizeLimits::DEFAULT,
        )
        .unwrap_or_else(|e| panic!("{n}: {e:#}"))
    })
    .collect()
}

#[test]
fn manifests_load_and_recipes_evaluate_at_every_shape() {
    for l in ladders() {
        assert!(!l.versions.is_empty());
        // The reference shape and every check case's.
        let reference = l.reference_shape();
        let mut shapes = vec![reference];
        shapes.extend(l.kind.cases(&reference).iter().map(|c| c.shape));
        for v in &l.versions {
            for s in shapes.iter().filter(|s| v.unsupported(s).is_none()) {
                let launch = v
                    .launch(s)
                    .unwrap_or_else(|e| panic!("{} {}: {e:#}", l.ladder, v.id));
                assert!(launch.grid.0 >= 1 && launch.block.0 >= 1);
                assert!(
                    launch.shared_bytes <= 227 * 1024,
                    "{} asks for too much shared memory",
                    v.id
                );
            }
            l.read(&v.source)
                .unwrap_or_else(|e| panic!("{}: {e:#}", v.id));
            if let Some(n) = &v.notes {
                let text = l.read(n).unwrap();
                assert!(
                    text.contains("## Prediction"),
                    "{} notes need a prediction",
                    v.id
                );
            }
        }
        l.read(&l.reference.source).unwrap();
    }
}

#[test]
fn the_reference_shape_flops_and_grids() {
    let l = stallscope::recipe::folders::load_recipe(
        &repo().join("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    let s = l.reference_shape();
    assert_eq!(s, att("1,64,1024,128"));
    assert_eq!(s.flops(), 34_359_738_368.0);
    assert_eq!(att("1,64,1024,128:causal").flops(), 17_179_869_184.0);
    let v01 = l.version("v01").unwrap().launch(&s).unwrap();
    assert_eq!((v01.grid, v01.block), ((8, 64, 1), (128, 1, 1)));
    let v05 = l
        .version("v05")
        .unwrap()
        .launch(&att("1,16,8192,128"))
        .unwrap();
    assert_eq!(v05.grid, (64, 16, 1));
    assert_eq!(v05.shared_bytes, 98_304);
    assert!(l.select(&["no-such-version".to_string()]).is_err());
    assert_eq!(
        l.select(&["all".to_string()]).unwrap().len(),
        l.versions.len()
    );
}

#[test]
fn every_kernel_compiles_for_hopper() {
    if !gpu::nvrtc::nvrtc_present() {
        skip(
            "every_kernel_compiles_for_hopper",
            "nvrtc",
            "NVRTC (libnvrtc.so) is not installed here",
        );
        return;
    }
    for l in ladders() {
        for b in gpu::build(&l, &[], "sm_90a", &l.reference_shape(), &[]).unwrap() {
            let c = b
                .outcome
                .unwrap_or_else(|e| panic!("{} {}: {e:#}", l.ladder, b.id));
            assert!(!c.cubin.is_empty());
            // A ptxas performance advisory — for Hopper, wgmmas serialized by a branch or a
            // wait loop in the wrong place — costs ~20 % and nothing else shows it.
            let advisories = gpu::nvrtc::performance_advisories(&c.log);
            assert!(
                advisories.is_empty(),
                "{} {}: {advisories:?}",
                l.ladder,
                b.id
            );
        }
    }
}

#[test]
fn a_compile_error_names_the_file_and_carries_the_log() {
    if !gpu::nvrtc::nvrtc_present() {
        skip(
            "a_compile_error_names_the_file_and_carries_the_log",
            "nvrtc",
            "NVRTC (libnvrtc.so) is not installed here",
        );
        return;
    }
    let c = gpu::nvrtc::Compiler::new("sm_90a").unwrap();
    let err = c
        .compile(
            "broken.cu",
            "extern \"C\" __global__ void k() { undefined_thing(); }",
            &[],
        )
        .err()
        .unwrap();
    let text = format!("{err:#}");
    assert!(text.contains("broken.cu does not compile"), "{text}");
    assert!(text.contains("undefined_thing"), "{text}");
}

#[test]
fn the_recipe_and_the_profiles_manifest_name_the_same_parents() {
    use stallscope::model::manifest::Manifest;
    let recipe = stallscope::recipe::folders::load_recipe(
        &repo().join("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    let profiles = Manifest::read(
        &repo().join("profiles/flash-attention/ladder.toml"),
        SizeLimits::DEFAULT,
    )
    .unwrap()
    .unwrap();
    let of_recipe: Vec<(&str, &str)> = recipe
        .versions
        .iter()
        .filter_map(|v| Some((v.id.as_str(), v.parent.as_deref()?)))
        .collect();
    let of_profiles: Vec<(&str, &str)> = profiles
        .versions
        .iter()
        .filter_map(|v| Some((v.id.as_str(), v.parent.as_deref()?)))
        .collect();
    assert_eq!(
        (of_recipe.clone(), of_profiles),
        (
            vec![
                ("v17", "v15"),
                ("v22", "v20"),
                ("v25", "v23"),
                ("v26", "v23")
            ],
            of_recipe
        )
    );
}

#[test]
fn a_run_records_each_version_parent_in_the_profiles_manifest() {
    use stallscope::model::manifest::{self, Manifest};
    let recipe = stallscope::recipe::folders::load_recipe(
        &repo().join("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    manifest::record_versions(
        dir.path(),
        &recipe.manifest_defaults(),
        &recipe.manifest_entries(&["v16", "v17"], dir.path()),
        &recipe.manifest_order(),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    let m = Manifest::read(&dir.path().join(manifest::FILE_NAME), SizeLimits::DEFAULT)
        .unwrap()
        .unwrap();
    let parents: Vec<_> = m.versions.iter().map(|v| v.parent.as_deref()).collect();
    assert_eq!(parents, [None, Some("v15")]);
}

/// The source with every pipeline mark (`SS_TRACE_…(…);`) turned into spaces of its
/// length: the same lines and columns, no marks.
fn blank_marks(src: &str) -> String {
    let mut out = src.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = src[from..].find("SS_TRACE_").map(|i| i + from) {
        // Past the macro's parentheses and the semicolon after them.
        let mut depth = 0usize;
        let mut end = at;
        for (i, c) in src[at..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        if src[end..].starts_with(';') {
            end += 1;
        }
        out[at..end].fill(b' ');
        from = end;
    }
    String::from_utf8(out).expect("marks are ASCII")
}

/// The static shared memory of a cubin's kernels: the sizes of its `.nv.shared.*`
/// sections (NOBITS, so sizes only), the largest.
fn static_shared(elf: &[u8]) -> usize {
    elf_sections(elf)
        .into_iter()
        .filter(|(name, _, _, _)| name.starts_with(".nv.shared."))
        .map(|(_, _, _, size)| size)
        .max()
        .unwrap_or(0)
}

/// A cubin's sections as (name, type, file offset, size).
fn elf_sections(elf: &[u8]) -> Vec<(String, u32, usize, usize)> {
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF cubin");
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28), u16_at(0x3A), u16_at(0x3C), u16_at(0x3E));
    let section = |i: usize| {
        let h = shoff + i * shentsize;
        (
            u32_at(h) as usize,
            u32_at(h + 4),
            u64_at(h + 0x18),
            u64_at(h + 0x20),
        )
    };
    let (_, _, names_at, _) = section(shstrndx);
    let name = |off: usize| {
        let s = &elf[names_at + off..];
        String::from_utf8_lossy(&s[..s.iter().position(|&b| b == 0).unwrap()]).into_owned()
    };
    (0..shnum)
        .map(section)
        .map(|(n, kind, at, size)| (name(n), kind, at, size))
        .collect()
}

/// The code sections (`.text.*`) of a cubin, by name: its SASS, without the line table
/// or the other sections a source's text reaches.
fn text_sections(elf: &[u8]) -> Vec<(String, Vec<u8>)> {
    // A NOBITS section (type 8, such as the trace build's static shared memory) holds
    // no bytes in the file.
    elf_sections(elf)
        .into_iter()
        .filter(|(n, kind, _, _)| *kind != 8 && n.starts_with(".text."))
        .map(|(n, _, at, size)| (n, elf[at..at + size].to_vec()))
        .collect()
}

#[test]
fn marks_blank_to_spaces_of_their_length() {
    let src = "a();\n    SS_TRACE_BEGIN(tr, f(2));\nb();\nSS_TRACE_OPEN(tr, 1, x == (0));\n";
    let blank = blank_marks(src);
    assert_eq!(blank.len(), src.len());
    assert_eq!(blank.lines().count(), src.lines().count());
    assert!(!blank.contains("SS_TRACE") && blank.contains("a();") && blank.contains("b();"));
    assert_eq!(blank.lines().nth(1).unwrap().trim(), "");
}

#[test]
fn every_marked_version_includes_the_markers_and_marks_each_stage() {
    for l in ladders() {
        for v in l.versions.iter().filter(|v| v.marked) {
            let src = l.read(&v.source).unwrap();
            assert!(src.contains("#include \"stallscope_trace.h\""), "{}", v.id);
            assert!(src.contains("SS_TRACE_OPEN("), "{} opens no lane", v.id);
            let stages: std::collections::BTreeSet<usize> = src
                .match_indices("SS_TRACE_BEGIN(tr, ")
                .filter_map(|(i, m)| {
                    src[i + m.len()..]
                        .split(')')
                        .next()
                        .and_then(|n| n.trim().parse().ok())
                })
                .collect();
            assert!(
                stages.iter().all(|&s| s < v.trace_stages.len()),
                "{}: stages {stages:?} of {:?}",
                v.id,
                v.trace_stages
            );
            let ends = src.matches("SS_TRACE_END(").count();
            let begins = src.matches("SS_TRACE_BEGIN(").count();
            assert_eq!(begins, ends, "{}: every begin has its end", v.id);
        }
    }
}

#[test]
fn the_markers_leave_a_version_s_code_unchanged_and_its_trace_build_compiles() {
    if !gpu::nvrtc::nvrtc_present() {
        skip(
            "the_markers_leave_a_version_s_code_unchanged_and_its_trace_build_compiles",
            "nvrtc",
            "NVRTC (libnvrtc.so) is not installed here",
        );
        return;
    }
    let c = gpu::nvrtc::Compiler::new("sm_90a").unwrap();
    let mut marked = 0;
    for l in ladders() {
        let shape = l.reference_shape();
        for v in l.versions.iter().filter(|v| v.marked) {
            marked += 1;
            let src = l.read(&v.source).unwrap();
            let mut opts = l.kind.defines(&shape);
            opts.extend(v.options.iter().cloned());
            let with = c.compile(&v.source, &src, &opts).unwrap();
            let without = c.compile(&v.source, &blank_marks(&src), &opts).unwrap();
            let code = text_sections(&with.cubin);
            assert!(!code.is_empty(), "{}: no code section", v.id);
            assert!(
                code == text_sections(&without.cubin),
                "{}: the marks change the code of the default build",
                v.id
            );
            let mut traced = opts.clone();
            traced.push("-DSTALLSCOPE_TRACE".into());
            let t = c
                .compile(&v.source, &src, &traced)
                .unwrap_or_else(|e| panic!("{} trace build: {e:#}", v.id));
            assert!(
                text_sections(&t.cubin) != code,
                "{}: the trace build stamps nothing",
                v.id
            );
            // The trace build's on-chip log is static shared memory: beside the
            // version's dynamic shared memory it must still fit an SM's 227 KiB.
            let log = static_shared(&t.cubin);
            assert!(log > 0, "{}: the trace build keeps no log on chip", v.id);
            let dynamic = v.launch(&shape).unwrap().shared_bytes as usize;
            assert!(
                log + dynamic <= 227 * 1024,
                "{}: the trace build's log ({log} B) and its shared memory ({dynamic} B) exceed 227 KiB: lower SS_TRACE_RING in its recipe options",
                v.id
            );
            // A mark that makes ptxas wait for the wgmmas in flight (an injected
            // warpgroup.arrive, C7519, or serialized wgmmas) costs the trace build its
            // overlap: the picture would not be the plain build's.
            // (The experiments' other variants of the mark, kept to take it apart, may.)
            let advisories = gpu::nvrtc::performance_advisories(&t.log);
            let variant = v
                .options
                .iter()
                .find_map(|o| o.strip_prefix("-DSS_TRACE_VARIANT="))
                .unwrap_or("0");
            assert!(
                advisories.is_empty() || !matches!(variant, "0" | "5"),
                "{} trace build: {advisories:?}",
                v.id
            );
        }
    }
    assert!(marked > 0, "no version is marked");
}
