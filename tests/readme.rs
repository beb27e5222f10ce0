//! The README and the ladder's notes tell the data's story: every trail block of the
//! README is `report`'s output on the bundled profiles, and every note's bottleneck line
//! names the labels the analysis gives the version and its parent.

mod common;

use assert_cmd::Command;
use common::{profiles, repo};
use stallscope::analysis;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};

/// The trail block of `report`'s table for one ladder: from the trail's heading to the
/// meanings of its labels.
fn reported_trail(ladder: &str) -> String {
    let out = Command::cargo_bin("stallscope")
        .unwrap()
        .env_remove("STALLSCOPE_PROFILES")
        .args(["report", "--ladder", ladder, "--profiles"])
        .arg(profiles())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let start = text.find("bottleneck trail:").expect("a trail");
    let end = start
        + text[start..]
            .find("\n\nmetric ")
            .expect("the table after it");
    text[start..end].trim_end().to_string()
}

/// The README's code block after the marker `<!-- trail: LADDER … -->`.
fn readme_trail(ladder: &str) -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marker = format!("<!-- trail: {ladder} ");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("no {marker}"));
    let block = &readme[at..];
    let open = block.find("```text\n").unwrap() + "```text\n".len();
    let close = open + block[open..].find("```").unwrap();
    block[open..close].trim_end().to_string()
}

#[test]
fn the_readme_trail_of_the_flash_attention_ladder_is_reports() {
    assert_eq!(
        readme_trail("flash-attention"),
        reported_trail("flash-attention")
    );
}

#[test]
fn the_readme_trail_of_the_gemm_ladder_is_reports() {
    assert_eq!(readme_trail("gemm"), reported_trail("gemm"));
}

#[test]
fn the_readme_trail_of_the_sgemm_toy_is_reports() {
    assert_eq!(readme_trail("sgemm-toy"), reported_trail("sgemm-toy"));
}

/// The versions of `ladder` whose notes' bottleneck line (`**Bottleneck: PARENT →
/// VERSION.**`) does not name the labels the analysis gives the version and its parent;
/// with `profiled_only`, a version without a label (no profile yet) is left out.
fn notes_not_naming_their_labels(ladder: &str, profiled_only: bool) -> Vec<String> {
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join(ladder),
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let label = |i: usize| a.trail.iter().find(|s| s.index == i)?.label.clone();
    let mut wrong = Vec::new();
    for s in a
        .trail
        .iter()
        .filter(|s| !profiled_only || s.label.is_some())
    {
        let v = &ladder.versions[s.index];
        let notes = v.notes.as_deref().unwrap_or_default().replace('\n', " ");
        let Some(at) = notes.find("**Bottleneck: ") else {
            wrong.push(format!("{}: no bottleneck line", v.id));
            continue;
        };
        let line = &notes[at + "**Bottleneck: ".len()..];
        let line = &line[..line.find("**").unwrap_or(line.len())];
        let written = line.trim_end_matches('.');
        let before = ladder
            .parent_of(s.index)
            .and_then(label)
            .unwrap_or_else(|| "—".into());
        let after = s.label.clone().unwrap_or_else(|| "—".into());
        let expected = format!("{before} → {after}");
        if written != expected {
            wrong.push(format!(
                "{}: {written:?}, the profiles say {expected:?}",
                v.id
            ));
        }
    }
    wrong
}

#[test]
fn every_note_names_the_labels_of_its_version_and_parent() {
    let wrong = notes_not_naming_their_labels("flash-attention", false);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_profiled_gemm_note_names_the_labels_of_its_version_and_parent() {
    let wrong = notes_not_naming_their_labels("gemm", true);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A count as the README writes it: `7,624`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The figures the README's prose quotes from the bundled profiles, each written as the
/// README writes it, from the data: FlashAttention-2's label, v11's runner-up (its
/// samples of the table's stall samples, `selected` left out, beside the raw page's PC
/// samples, which count it) and the heat table's `samples · share` example.
fn figures_of_the_data() -> Vec<String> {
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let of = |id: &str| {
        let i = ladder.versions.iter().position(|v| v.id == id).unwrap();
        (&ladder.versions[i], &a.versions[i])
    };
    let pct = |share: f64| format!("{:.1}", share * 100.0);
    let (_, fa2) = of("fa2");
    let b = fa2.bottleneck.as_ref().unwrap();
    let ru = b.runner_up.as_ref().unwrap();
    let (v11, an11) = of("v11");
    let b11 = an11.bottleneck.as_ref().unwrap();
    let ru11 = b11.runner_up.as_ref().unwrap();
    let table = an11.matrix.as_ref().unwrap().samples;
    let pc = v11
        .profile
        .as_ref()
        .unwrap()
        .raw_value("smsp__pcsamp_sample_count")
        .unwrap() as u64;
    vec![
        format!(
            "FlashAttention-2's kernel reads `{} @ {}` ({} %, `{} @ {}` {} % next)",
            b.top.reason,
            b.top.opcode,
            pct(b.top.share),
            ru.reason,
            ru.opcode,
            pct(ru.share)
        ),
        format!(
            "v11's runner-up (`{} @ {}`), {} of the table's {} warp samples, {} % (the raw page counts {} PC samples too)",
            ru11.reason,
            ru11.opcode,
            thousands(ru11.samples),
            thousands(table),
            pct(ru11.share),
            thousands(pc)
        ),
        format!(
            "its share (`{} · {}`)",
            thousands(ru11.samples),
            pct(ru11.share)
        ),
    ]
}

/// Every figure the README's prose quotes from the bundled profiles is the data's, as
/// above (v11's runner-up once read "669 of 7,624 stall samples, 8.8 %", a share of the
/// table without `selected`; every share is now of all 9,559 warp samples).
#[test]
fn the_readmes_figures_are_the_datas() {
    // Compared as words: a line break of the README's prose is a space.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = words(&std::fs::read_to_string(repo().join("README.md")).unwrap());
    let missing: Vec<String> = figures_of_the_data()
        .into_iter()
        .filter(|f| !readme.contains(&words(f)))
        .collect();
    assert!(
        missing.is_empty(),
        "the README should say:\n{}",
        missing.join("\n\n")
    );
}

/// What the README says of the samples no column names holds on every bundled version:
/// they sit on HGMMA lines and equal the raw page's
/// `smsp__pcsamp_warps_issue_stalled_warpgroup_arrive`.
#[test]
fn warpgroup_arrive_samples_equal_the_raw_pages_on_every_bundled_version() {
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let mut checked = 0;
    for (v, an) in ladder.versions.iter().zip(&a.versions) {
        let (Some(m), Some(p)) = (&an.matrix, &v.profile) else {
            continue;
        };
        let cells: Vec<_> = m
            .cells
            .iter()
            .filter(|c| c.reason == stallscope::ncu::StallReason::WarpgroupArrive)
            .collect();
        let raw = p.raw_value("smsp__pcsamp_warps_issue_stalled_warpgroup_arrive");
        let samples: u64 = cells.iter().map(|c| c.samples).sum();
        if samples == 0 && raw.unwrap_or(0.0) == 0.0 {
            continue;
        }
        checked += 1;
        assert!(
            cells.iter().all(|c| c.opcode == "HGMMA"),
            "{}: {cells:?}",
            v.id
        );
        assert_eq!(Some(samples as f64), raw, "{}", v.id);
    }
    assert!(checked > 10, "{checked}");
}

/// A figure as written, with how far its last digit lets it be from the value: `69.8`
/// is (69.8, 0.05).
fn written(cell: &str) -> Option<(f64, f64)> {
    let t: String = cell.trim().chars().filter(|&c| c != ',').collect();
    let x: f64 = t.parse().ok()?;
    let decimals = t.split_once('.').map_or(0, |(_, f)| f.len());
    Some((x, 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9))
}

/// The README's table of run results is the bundled runs.json's: every version's and
/// baseline's median time and mean SM clock at the three shapes, and its energy per
/// launch at the reference shape, as the ladder shows them.
#[test]
fn the_readmes_run_table_is_the_bundled_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let header = readme
        .lines()
        .find(|l| l.starts_with("| version | | 1,64,1024 µs |"))
        .expect("the run table");
    let at = readme.find(header).unwrap();
    let rows: Vec<Vec<&str>> = readme[at..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    // Columns: id, title, then (µs, MHz, ratio) per shape, then mJ at the first.
    let shapes = ["1,64,1024,128", "1,16,8192,128", "1,16,8192,128:causal"];
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (n, shape) in shapes.iter().enumerate() {
        let attention = stallscope::kinds::Kind::named("attention").unwrap();
        let shown = analysis::Shown::at(stallscope::kinds::Shape::parse(attention, shape).unwrap());
        for row in &rows {
            let v = ladder
                .versions
                .iter()
                .find(|v| v.id == row[0])
                .unwrap_or_else(|| panic!("no version {}", row[0]));
            let run = shown
                .run(&ladder, v)
                .unwrap_or_else(|| panic!("{} at {shape}", v.id));
            let mut cells = vec![
                ("µs", row[2 + 3 * n], run.median_us),
                ("MHz", row[3 + 3 * n], run.sm_clock_mhz),
            ];
            if n == 0 {
                cells.push(("mJ", row[11], run.energy_mj));
            }
            for (what, cell, value) in cells {
                let (x, tolerance) = written(cell).unwrap_or_else(|| panic!("{cell:?}"));
                checked += 1;
                if value.is_none_or(|v| (v - x).abs() > tolerance) {
                    wrong.push(format!(
                        "{} {what} at {shape}: {cell}, data {value:?}",
                        v.id
                    ));
                }
            }
        }
    }
    assert!(checked > 100, "{checked}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The README's roofline picture is `report`'s SVG of the flash-attention ladder, byte
/// for byte, and the shares its prose quotes (v29's and cuDNN's of the nearer roof) are
/// the model's.
#[test]
fn the_readme_roofline_picture_is_reports() {
    let out = common::stdout_on_bundled(&[
        "report",
        "--ladder",
        "flash-attention",
        "--format",
        "svg",
        "--chart",
        "roofline",
    ]);
    let file = "assets/roofline-flash-attention.svg";
    let written = std::fs::read_to_string(repo().join(file)).unwrap();
    assert!(
        written == out,
        "{file} is not the command's output: stallscope report --ladder flash-attention --format svg --chart roofline -o {file}"
    );
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("]({file})")),
        "the README shows {file}"
    );
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let r = analysis::roofline::ladder_roofline(&ladder);
    let share = |id: &str| {
        let v = r.versions.iter().find(|v| v.id == id).unwrap();
        let s = v.point.as_ref().and_then(|p| p.nearer).unwrap();
        format!("{:.0} %", s.share * 100.0)
    };
    let prose = readme
        .split("<!-- roofline: flash-attention")
        .nth(1)
        .unwrap();
    let prose = prose.split("\n\n").next().unwrap().replace('\n', " ");
    for quoted in [
        format!(
            "v29, reaches {} of the ladder's 750 TFLOP/s peak",
            share("v29")
        ),
        format!("cuDNN {}", share("cudnn")),
        format!("{} of its nearer roof, L1/shared", share("v01")),
    ] {
        assert!(prose.contains(&quoted), "the README should say {quoted:?}");
    }
}
