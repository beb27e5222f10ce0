//! Reading what users give: gzip files of several members and gzip bombs, files that
//! are not exports (ncu's messages alone, other profilers' CSV), exports cut short,
//! folders of exports whatever their extension, and numbers no export holds.

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;
use stallscope::ncu::{self, ReadOptions};
use std::io::Write;
use std::path::Path;

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A gzip file of `members` members, each `size` bytes of one digit (text: a bomb of
/// zeros is refused at its first bytes as binary data).
fn bomb(size: usize, members: usize) -> Vec<u8> {
    gzip(&vec![b'7'; size]).repeat(members)
}

// Gzip.

#[test]
fn every_member_of_a_concatenated_gzip_file_is_read() {
    // `cat a.gz b.gz`: the details page's first launch in one member, the second in
    // the next.
    let text = std::fs::read_to_string(fixture("sgemm/det.csv")).unwrap();
    let second = text.find("\n\"1\",").unwrap() + 1;
    let mut joined = gzip(&text.as_bytes()[..second]);
    joined.extend(gzip(&text.as_bytes()[second..]));
    let e = ncu::parse_bytes(Path::new("det.csv.gz"), &joined).unwrap();
    assert_eq!(e.records.len(), 2);
}

#[test]
fn a_gzip_bomb_is_refused_naming_the_limit_and_how_to_raise_it() {
    let options = ReadOptions {
        max_decompressed: 1 << 20,
        ..ReadOptions::default()
    };
    let err =
        ncu::parse_bytes_with(Path::new("bomb.csv.gz"), &bomb(8 << 20, 1), &options).unwrap_err();
    assert!(
        err.message.contains("more than 1 MiB")
            && err.message.contains("STALLSCOPE_MAX_DECOMPRESSED="),
        "{err}"
    );
}

#[test]
fn the_environment_variable_sets_the_decompressed_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.csv.gz");
    std::fs::write(&path, bomb(4 << 20, 1)).unwrap();
    let out = stallscope()
        .args(["report"])
        .arg(&path)
        .env("STALLSCOPE_MAX_DECOMPRESSED", "2MiB")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("more than 2 MiB"), "{err}");
}

#[test]
fn a_bomb_past_the_default_limit_is_refused() {
    // 2.5 GiB of text in 40 members of 64 MiB: refused at 2 GiB, without holding it.
    let err = ncu::parse_bytes(Path::new("bomb.csv.gz"), &bomb(64 << 20, 40)).unwrap_err();
    assert!(err.message.contains("more than 2 GiB"), "{err}");
}

// What is not an export, said in its own words.

fn error_of(name: &str) -> ncu::ParseError {
    ncu::read_file(&fixture(&format!("ncu-versions/{name}"))).unwrap_err()
}

#[test]
fn an_unknown_section_is_reported_with_what_to_do() {
    let err = error_of("ncu_unknown_section.log");
    assert!(
        err.message.contains("did not match any section")
            && err.message.contains("ncu --list-sections"),
        "{err}"
    );
}

#[test]
fn no_kernels_profiled_is_reported_at_its_line_with_what_to_do() {
    let err = error_of("ncu_no_kernels.log");
    assert_eq!(err.line, Some(5), "{err}");
    assert!(
        err.message.contains("No kernels were profiled") && err.message.contains("--kernel-name"),
        "{err}"
    );
}

#[test]
fn a_program_failing_under_ncu_is_reported_before_the_warning_that_follows() {
    let err = error_of("ncu_app_error.log");
    assert!(
        err.message.contains("returned an error code (1)")
            && err.message.contains("run it without ncu"),
        "{err}"
    );
}

#[test]
fn an_nsys_stats_csv_is_named_with_the_ncu_command_to_use() {
    let err = error_of("nsys_kern_sum.csv");
    assert!(
        err.message.contains("nsys stats")
            && err
                .message
                .contains("ncu --import report.ncu-rep --csv --page raw"),
        "{err}"
    );
}

#[test]
fn nvprof_output_is_named() {
    let err = error_of("nvprof_summary.csv");
    assert!(
        err.message.contains("nvprof's CSV") && err.message.contains("ncu --set full"),
        "{err}"
    );
}

#[test]
fn an_nvprof_metrics_table_is_named_by_its_header() {
    let err = error_of("nvprof_metrics.csv");
    assert!(err.message.contains("nvprof's CSV"), "{err}");
}

#[test]
fn a_visual_profiler_export_is_named() {
    let err = error_of("nvvp_details.csv");
    assert!(err.message.contains("Visual Profiler"), "{err}");
}

#[test]
fn a_command_line_profiler_log_is_named() {
    let err = error_of("cuda_profile_log.csv");
    assert!(err.message.contains("command-line profiler"), "{err}");
}

/// ncu's `--list-sections` and `--list-sets` tables (real output, ncu 2025.3.1).
#[test]
fn ncu_listings_of_sections_and_sets_are_named() {
    for (file, what) in [
        ("list_sections.txt", "ncu --list-sections"),
        ("list_sets.txt", "ncu --list-sets"),
    ] {
        let err = ncu::read_file(&fixture(&format!("h200/{file}"))).unwrap_err();
        assert!(
            err.message.contains(what) && err.line == Some(2),
            "{file}: {err}"
        );
    }
}

#[test]
fn each_message_is_one_line_naming_the_file() {
    for name in [
        "ncu_unknown_section.log",
        "ncu_no_kernels.log",
        "ncu_app_error.log",
        "nsys_kern_sum.csv",
        "nvprof_summary.csv",
        "nvvp_details.csv",
    ] {
        let shown = error_of(name).to_string();
        assert!(shown.contains(name) && !shown.contains('\n'), "{shown}");
    }
}

// Exports cut short.

/// A real export cut in the middle of its 1-based line `line`.
fn cut_in_line(rel: &str, line: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let start: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let len = text[start..].find('\n').unwrap_or(text.len() - start);
    text.as_bytes()[..start + len / 2].to_vec()
}

fn partial() -> ReadOptions {
    ReadOptions {
        partial: true,
        ..ReadOptions::default()
    }
}

fn kernels(e: &ncu::Export) -> Vec<String> {
    e.records
        .iter()
        .map(|r| stallscope::model::short_kernel_name(&r.kernel))
        .collect()
}

/// A metric row: section, name, value.
type Row = (String, String, ncu::Value);

/// Each launch's metric rows and rule count.
fn launches(e: &ncu::Export) -> Vec<(Vec<Row>, usize)> {
    e.records
        .iter()
        .map(|r| match &r.page {
            ncu::Page::Metrics { metrics, rules } => (
                metrics
                    .iter()
                    .map(|m| (m.section.to_string(), m.name.to_string(), m.value.clone()))
                    .collect(),
                rules.len(),
            ),
            _ => panic!("a details page"),
        })
        .collect()
}

#[test]
fn a_details_page_cut_anywhere_in_its_second_launch_keeps_the_first_whole() {
    let text = std::fs::read(fixture("sgemm/det.csv")).unwrap();
    let whole = launches(&ncu::parse_bytes(Path::new("det.csv"), &text).unwrap());
    let second = text.windows(5).position(|w| w == b"\n\"1\",").unwrap() + 1;
    for cut in (second + 1..text.len() - 1).step_by(37) {
        let e = ncu::parse_bytes_with(Path::new("det.csv"), &text[..cut], &partial()).unwrap();
        assert_eq!(launches(&e)[0], whole[0], "cut at byte {cut}");
    }
}

#[test]
fn a_cut_launch_is_left_out_or_kept_with_whole_values_only() {
    // A file cut right after a cell cannot be told from one that ends there; what is
    // kept of the second launch must then be the start of it, no value cut.
    let text = std::fs::read(fixture("sgemm/det.csv")).unwrap();
    let whole = launches(&ncu::parse_bytes(Path::new("det.csv"), &text).unwrap());
    let second = text.windows(5).position(|w| w == b"\n\"1\",").unwrap() + 1;
    for cut in (second + 1..text.len() - 1).step_by(37) {
        let e = ncu::parse_bytes_with(Path::new("det.csv"), &text[..cut], &partial()).unwrap();
        if let Some((rows, _)) = launches(&e).get(1) {
            assert_eq!(rows[..], whole[1].0[..rows.len()], "cut at byte {cut}");
        }
    }
}

#[test]
fn a_cut_details_page_warns_at_the_line_where_it_stops() {
    let bytes = cut_in_line("sgemm/det.csv", 150);
    let e = ncu::parse_bytes_with(Path::new("det.csv"), &bytes, &partial()).unwrap();
    let lines: Vec<Option<u64>> = e.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [Some(150)], "{:?}", e.warnings);
}

/// The first `n` lines of a file, each whole: a cut between two rows, which leaves no
/// sign in the text.
fn first_lines(name: &str, n: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').take(n).collect();
    lines.concat().into_bytes()
}

#[test]
fn a_details_page_cut_between_two_rows_leaves_out_its_last_launch_and_says_so() {
    // The real H200 export of eight launches, cut inside the eighth (line 375 starts it).
    let bytes = first_lines("h200/others_basic_details.csv", 424);
    let e = ncu::parse_bytes_with(Path::new("d.csv"), &bytes, &partial()).unwrap();
    assert_eq!(e.records.len(), 7, "{:?}", e.warnings);
    let lines: Vec<Option<u64>> = e.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [Some(424)], "{:?}", e.warnings);
}

#[test]
fn strict_reading_refuses_a_details_page_cut_between_two_rows() {
    let bytes = first_lines("h200/others_basic_details.csv", 424);
    let err = ncu::parse_bytes(Path::new("d.csv"), &bytes).unwrap_err();
    assert!(err.message.contains("seems to stop inside it"), "{err}");
}

#[test]
fn a_raw_page_cut_short_keeps_its_complete_launches() {
    let bytes = cut_in_line("sgemm/raw.csv", 4);
    let e = ncu::parse_bytes_with(Path::new("raw.csv"), &bytes, &partial()).unwrap();
    assert_eq!(kernels(&e), ["mm_naive"]);
}

#[test]
fn a_source_page_cut_short_keeps_its_complete_blocks() {
    // Line 500 is an instruction of the first mm_tiled block.
    let bytes = cut_in_line("sgemm/src_sass.csv", 500);
    let e = ncu::parse_bytes_with(Path::new("src.csv"), &bytes, &partial()).unwrap();
    assert_eq!(kernels(&e), ["mm_naive"]);
}

#[test]
fn a_source_page_ending_after_a_kernel_line_keeps_the_blocks_before() {
    let text = std::fs::read_to_string(fixture("sgemm/src_sass.csv")).unwrap();
    let tiled = text.find("\"Kernel Name\",\"mm_tiled").unwrap();
    let end = tiled + text[tiled..].find('\n').unwrap() + 1;
    let e =
        ncu::parse_bytes_with(Path::new("src.csv"), &text.as_bytes()[..end], &partial()).unwrap();
    assert_eq!(kernels(&e), ["mm_naive"]);
}

#[test]
fn strict_reading_refuses_an_export_cut_short_at_its_line() {
    let bytes = cut_in_line("sgemm/det.csv", 150);
    let err = ncu::parse_bytes(Path::new("det.csv"), &bytes).unwrap_err();
    assert_eq!(err.line, Some(150), "{err}");
}

#[test]
fn a_short_row_before_the_end_is_an_error_even_when_reading_in_part() {
    let err =
        ncu::read_file_with(&fixture("broken/short_row_details.csv"), &partial()).unwrap_err();
    assert_eq!(err.line, Some(7), "{err}");
}

#[test]
fn a_file_cut_in_its_only_launch_is_an_error_even_when_reading_in_part() {
    let err = ncu::read_file_with(&fixture("broken/truncated_raw.csv"), &partial()).unwrap_err();
    assert!(
        err.message.contains("row is shorter than its header"),
        "{err}"
    );
}

fn cut_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("det.csv");
    std::fs::write(&path, cut_in_line("sgemm/det.csv", 150)).unwrap();
    path
}

#[test]
fn the_command_line_reads_a_cut_export_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = cut_file(&dir);
    let out = stallscope().arg("report").arg(&path).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        out.status.success()
            && stdout.contains("mm_naive")
            && !stdout.contains("mm_tiled")
            && stderr.starts_with(&format!(
                "warning: {}:150: the file ends in the middle of a launch",
                path.display()
            )),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn strict_refuses_a_cut_export_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = cut_file(&dir);
    stallscope()
        .args(["report", "--strict"])
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "{}:150: ",
            path.display()
        )));
}

#[test]
fn a_raw_page_cut_anywhere_in_its_second_row_keeps_only_whole_rows() {
    let text = std::fs::read(fixture("sgemm/raw.csv")).unwrap();
    let values = |e: &ncu::Export| -> Vec<Vec<ncu::Value>> {
        e.records
            .iter()
            .map(|r| match &r.page {
                ncu::Page::Raw(raw) => raw.iter().map(|(_, v)| v).collect(),
                _ => panic!("a raw page"),
            })
            .collect()
    };
    let whole = values(&ncu::parse_bytes(Path::new("raw.csv"), &text).unwrap());
    let last_row = text[..text.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    for cut in (last_row + 1..text.len() - 1).step_by(211) {
        let e = ncu::parse_bytes_with(Path::new("raw.csv"), &text[..cut], &partial()).unwrap();
        let kept = values(&e);
        assert_eq!(kept[..], whole[..kept.len()], "cut at byte {cut}");
    }
}

#[test]
fn a_source_page_cut_anywhere_keeps_only_whole_values() {
    let text = std::fs::read(fixture("sgemm/src_sass.csv")).unwrap();
    let listings = |e: &ncu::Export| -> Vec<(String, ncu::SourceListing)> {
        e.records
            .iter()
            .map(|r| match &r.page {
                ncu::Page::Source(l) => (r.kernel.clone(), l.clone()),
                _ => panic!("a source page"),
            })
            .collect()
    };
    let whole = listings(&ncu::parse_bytes(Path::new("src.csv"), &text).unwrap());
    for cut in (1..text.len() - 1).step_by(331) {
        let Ok(e) = ncu::parse_bytes_with(Path::new("src.csv"), &text[..cut], &partial()) else {
            continue; // cut in the first block: nothing whole to keep
        };
        for (kernel, kept) in listings(&e) {
            let (_, full) = whole.iter().find(|(k, _)| *k == kernel).unwrap();
            assert_eq!(
                kept.lines[..],
                full.lines[..kept.lines.len()],
                "cut at byte {cut}"
            );
        }
    }
}

// Folders read by content.

fn report_of(args: &[&std::ffi::OsStr]) -> String {
    let out = stallscope().arg("report").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_folder_reads_its_exports_whatever_their_names_as_the_files_given_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let read = |rel: &str| std::fs::read(fixture(rel)).unwrap();
    let files = [
        put("a_details.log", &read("sgemm/det.csv")),
        put("b_raw", &read("sgemm/raw.csv")),
        put("c_source.txt.gz", &gzip(&read("sgemm/src_sass.csv"))),
    ];
    put("README.md", b"# my profiles\n\nmeasured on monday\n");
    put("notes.bin", &[0u8, 1, 2, 3, 255]);
    let one_by_one: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
    assert_eq!(report_of(&[dir.path().as_os_str()]), report_of(&one_by_one));
}

#[test]
fn a_folder_without_exports_says_what_its_files_are() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("ncu-versions/nsys_kern_sum.csv"),
        dir.path().join("kern_sum.csv"),
    )
    .unwrap();
    stallscope()
        .args(["report"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(
            predicates::str::contains("holds no ladder")
                .and(predicates::str::contains("nsys stats")),
        );
}

// Numbers no export holds.

/// Text of an export with one cell changed: `column` (0-based) of the 1-based `line`,
/// a row whose cells are all quoted.
fn edit(text: &str, line: usize, column: usize, value: &str) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let row = &lines[line - 1];
    let mut cells: Vec<String> = row[1..].split("\",\"").map(str::to_string).collect();
    // The last cell keeps what follows its closing quote (a ragged row's comma).
    let end = cells[column]
        .find('"')
        .map_or(String::new(), |q| cells[column][q..].to_string());
    cells[column] = format!("{value}{end}");
    lines[line - 1] = format!("\"{}", cells.join("\",\""));
    lines.join("\n")
}

/// A real export with one cell changed.
fn with_cell(rel: &str, line: usize, column: usize, value: &str) -> Vec<u8> {
    edit(
        &std::fs::read_to_string(fixture(rel)).unwrap(),
        line,
        column,
        value,
    )
    .into_bytes()
}

fn refused(rel: &str, bytes: &[u8]) -> ncu::ParseError {
    ncu::parse_bytes(Path::new(rel), bytes).unwrap_err()
}

#[test]
fn a_negative_duration_on_a_details_page_is_refused_at_its_line() {
    // Line 7 is mm_naive's Duration (ms); column 14 its value.
    let err = refused("det.csv", &with_cell("sgemm/det.csv", 7, 14, "-2.74"));
    assert!(
        err.line == Some(7) && err.message.contains("negative"),
        "{err}"
    );
}

#[test]
fn a_negative_duration_on_a_raw_page_is_refused_naming_its_column() {
    let err = refused("raw.csv", &with_cell("sgemm/raw.csv", 3, 321, "-2.743968"));
    assert!(
        err.line == Some(3)
            && err.message.contains("column gpu__time_duration.sum")
            && err.message.contains("negative"),
        "{err}"
    );
}

#[test]
fn a_duration_that_is_not_a_number_is_refused() {
    let err = refused("det.csv", &with_cell("sgemm/det.csv", 7, 14, "nan"));
    assert!(
        err.line == Some(7) && err.message.contains("not a number"),
        "{err}"
    );
}

#[test]
fn an_infinite_number_is_refused() {
    let err = refused("raw.csv", &with_cell("sgemm/raw.csv", 3, 321, "1e999"));
    assert!(
        err.line == Some(3) && err.message.contains("beyond the range"),
        "{err}"
    );
}

#[test]
fn a_negative_sample_count_is_refused() {
    let err = refused("raw.csv", &with_cell("sgemm/raw.csv", 3, 2099, "-1"));
    assert!(
        err.message.contains("column smsp__pcsamp_sample_count")
            && err.message.contains("negative"),
        "{err}"
    );
}

#[test]
fn a_negative_launch_id_is_refused() {
    let err = refused("raw.csv", &with_cell("sgemm/raw.csv", 3, 0, "-1"));
    assert!(
        err.message.contains("column ID") && err.message.contains("negative"),
        "{err}"
    );
}

#[test]
fn a_negative_instruction_sample_count_is_refused_at_its_line() {
    // Line 3 is mm_naive's first instruction; column 2 its samples.
    let err = refused("src.csv", &with_cell("sgemm/src_sass.csv", 3, 2, "-60"));
    assert!(
        err.line == Some(3) && err.message.contains("negative"),
        "{err}"
    );
}

#[test]
fn a_fractional_sample_count_is_refused() {
    let err = refused("src.csv", &with_cell("sgemm/src_sass.csv", 3, 2, "60.5"));
    assert!(err.message.contains("not a whole number"), "{err}");
}

#[test]
fn a_stall_count_past_its_range_is_refused_not_saturated() {
    // Column 34 is stall_long_sb; stall counts are held in 32 bits.
    let err = refused(
        "src.csv",
        &with_cell("sgemm/src_sass.csv", 3, 34, "5,000,000,000"),
    );
    assert!(
        err.message.contains("column stall_long_sb")
            && err.message.contains("larger than 4294967295"),
        "{err}"
    );
}

#[test]
fn more_selected_samples_than_samples_are_refused() {
    // Column 41 is stall_selected; the line has 60 samples.
    let err = refused("src.csv", &with_cell("sgemm/src_sass.csv", 3, 41, "61"));
    assert!(
        err.line == Some(3) && err.message.contains("exceed all its samples"),
        "{err}"
    );
}

#[test]
fn stall_columns_adding_up_past_all_samples_are_refused() {
    // Column 34 is stall_long_sb (0); the line's 60 samples are all in named columns.
    let err = refused("src.csv", &with_cell("sgemm/src_sass.csv", 3, 34, "1"));
    assert_eq!(
        err.to_string(),
        "src.csv:3: the line's stall_* columns add up to 61 samples, more than its \
         \"Warp Stall Sampling (All Samples)\" (60)"
    );
}

/// v11's source page with one stall column renamed to one stallscope does not know (as
/// a newer ncu might add): the remainder then holds that column's samples too, and none
/// of it is called warpgroup_arrive.
#[test]
fn an_unknown_stall_column_leaves_the_remainder_unnamed() {
    let bytes = std::fs::read(fixture("h200/attn_v11_source.csv.gz")).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    assert!(text.contains("\"stall_wait\","));
    let text = text.replacen("\"stall_wait\",", "\"stall_future_reason\",", 1);
    let e = ncu::parse_bytes(Path::new("src.csv"), text.as_bytes()).unwrap();
    let ncu::Page::Source(listing) = &e.records[0].page else {
        panic!("a source page")
    };
    let named: u64 = listing
        .lines
        .iter()
        .map(|l| u64::from(l.stall(ncu::StallReason::WarpgroupArrive)))
        .sum();
    assert_eq!(named, 0);
}

#[test]
fn the_samples_no_source_column_names_are_the_raw_page_s_warpgroup_arrive() {
    // ncu 2025.3's source page has no stall_warpgroup_arrive column: what All Samples
    // holds beyond the named columns (on v11's HGMMA lines) is the raw page's counter.
    let listing = match ncu::read_file(&fixture("h200/attn_v11_source.csv.gz"))
        .unwrap()
        .records
        .remove(0)
        .page
    {
        ncu::Page::Source(l) => l,
        _ => panic!("a source page"),
    };
    let inferred: u64 = listing
        .lines
        .iter()
        .map(|l| u64::from(l.stall(ncu::StallReason::WarpgroupArrive)))
        .sum();
    let raw = match &ncu::read_file(&fixture("h200/attn_v11_raw.csv.gz"))
        .unwrap()
        .records[0]
        .page
    {
        ncu::Page::Raw(r) => r.num("smsp__pcsamp_warps_issue_stalled_warpgroup_arrive"),
        _ => panic!("a raw page"),
    };
    assert_eq!((inferred as f64, raw), (669.0, Some(669.0)));
}

#[test]
fn samples_past_the_named_columns_by_more_than_32_bits_are_refused() {
    // On a warpgroup MMA line, where that remainder is counted as warpgroup_arrive.
    let text = std::fs::read_to_string(fixture("sgemm/src_sass.csv")).unwrap();
    let text = edit(&text, 3, 1, "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24");
    let huge = "10,000,000,000";
    let err = refused("src.csv", edit(&text, 3, 2, huge).as_bytes());
    assert!(
        err.line == Some(3) && err.message.contains("by more than 4294967295"),
        "{err}"
    );
}

#[test]
fn samples_adding_up_past_64_bits_are_refused() {
    // Under ncu 2021's name for the samples column (with "All Samples", samples beyond
    // the named columns are warpgroup_arrive ones, and these would be too many).
    let text = std::fs::read_to_string(fixture("sgemm/src_sass.csv"))
        .unwrap()
        .replace("(All Samples)", "(All Cycles)");
    let huge = "10,000,000,000,000,000,000";
    let twice = edit(&edit(&text, 3, 2, huge), 4, 2, huge);
    let err = refused("src.csv", twice.as_bytes());
    assert!(
        err.line == Some(4) && err.message.contains("add up to more than"),
        "{err}"
    );
}

#[test]
fn a_listing_s_sample_total_does_not_overflow() {
    let line = |address, samples| ncu::SassLine {
        address,
        text: "NOP".into(),
        opcode: "NOP".into(),
        samples,
        samples_not_issued: 0,
        executed: None,
        stalls: vec![0; ncu::StallReason::COUNT].into_boxed_slice(),
        cuda_line: None,
    };
    let listing = ncu::SourceListing {
        lines: vec![line(0, u64::MAX), line(16, u64::MAX)],
        cuda_lines: Vec::new(),
        file: None,
    };
    assert_eq!(listing.total_samples(), 2 * u128::from(u64::MAX));
}

// The raw page's fast reading.

/// Every launch of a raw page as read: kernel, ids, line, and each cell's value.
fn raw_launches(path: &str, text: &str) -> Vec<String> {
    let e = ncu::parse_bytes(Path::new(path), text.as_bytes()).unwrap();
    e.records
        .iter()
        .map(|r| {
            let ncu::Page::Raw(raw) = &r.page else {
                panic!("{path} holds a raw page")
            };
            let cells: Vec<String> = raw
                .iter()
                .map(|(c, v)| match v {
                    ncu::Value::Num(x) => format!("{}={:x}", c.name, x.to_bits()),
                    other => format!("{}={other:?}", c.name),
                })
                .collect();
            format!(
                "{} {:?} {:?} line {} {:?} {}",
                r.kernel,
                r.launch_id,
                r.process_id,
                r.line,
                r.launch,
                cells.join(",")
            )
        })
        .collect()
}

#[test]
fn a_raw_page_reads_the_same_through_the_fast_path_and_the_csv_reader() {
    // ncu quotes every cell: such a page is read without the CSV reader. One unquoted
    // cell (still valid CSV) sends the same page through the CSV reader.
    let text = std::fs::read_to_string(fixture("h200/others_basic_raw.csv")).unwrap();
    let units_end = text.match_indices('\n').nth(1).unwrap().0 + 1;
    let (head, rows) = text.split_at(units_end);
    let unquoted = format!("{head}{}", rows.replacen("\"1\",", "1,", 1));
    assert_ne!(unquoted, text);
    assert_eq!(
        raw_launches("quoted.csv", &text),
        raw_launches("unquoted.csv", &unquoted)
    );
}

#[test]
fn changing_one_launch_of_a_page_leaves_the_others_as_read() {
    // The launches of a page share one block of cells: a change to one is its own.
    let e = ncu::parse_bytes(
        Path::new("raw.csv"),
        &std::fs::read(fixture("sgemm/raw.csv")).unwrap(),
    )
    .unwrap();
    let raws: Vec<&ncu::RawMetrics> = e
        .records
        .iter()
        .map(|r| match &r.page {
            ncu::Page::Raw(raw) => raw,
            _ => panic!("a raw page"),
        })
        .collect();
    let col = raws[1].iter().position(|(_, v)| v.num().is_some()).unwrap();
    let mut first = raws[0].clone();
    first.clear(col);
    assert_eq!(
        (
            first.value(col),
            raws[1].value(col).is_empty(),
            raws[0].value(col).is_empty()
        ),
        (ncu::Value::Empty, false, false)
    );
}

/// A large export named on the command line is mapped, not copied: the bytes seen are
/// the file's, and a pipe or a small file is still read into memory.
#[test]
fn large_files_are_mapped_with_the_same_bytes() {
    use stallscope::files::mapped::{FileBytes, MAP_FROM};
    use stallscope::files::read::given;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.csv");
    let bytes: Vec<u8> = (0..MAP_FROM as usize + 4097)
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    std::fs::write(&big, &bytes).unwrap();
    let read = given(&big, u64::MAX).unwrap();
    assert!(matches!(read, FileBytes::Mapped(_)));
    assert!(*read == *bytes);
    // Over the per-file limit: refused before anything is mapped.
    let err = given(&big, MAP_FROM).err().expect("over the limit");
    assert!(err.to_string().contains("per-file limit"), "{err}");
    let small = dir.path().join("small.csv");
    std::fs::write(&small, &bytes[..1000]).unwrap();
    let read = given(&small, u64::MAX).unwrap();
    assert!(matches!(read, FileBytes::Read(_)));
    assert_eq!(read.into_vec(), &bytes[..1000]);
}

/// A raw page of 8 MB or more is read in two halves side by side (where the machine has
/// two cores): its launches, their lines and every cell read as those of its two halves
/// read as files of their own.
#[test]
fn a_large_raw_page_reads_as_its_halves_do() {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    for sample in ["h200/sdpa_cudnn_raw.csv", "h200/sdpa_flash_raw.csv"] {
        let text = std::fs::read_to_string(fixture(sample)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        if header.is_empty() {
            header = lines[..2].iter().map(|l| l.to_string()).collect();
        }
        rows.extend(
            lines[2..]
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| l.to_string()),
        );
    }
    let page = |ids: std::ops::Range<usize>| {
        let mut out = format!("{}\n{}\n", header[0], header[1]);
        for i in ids {
            let row = &rows[i % rows.len()];
            out.push_str(&format!("\"{i}{}\n", &row[row.find("\",").unwrap()..]));
        }
        out
    };
    let whole = page(0..600);
    assert!(
        whole.len() >= 8 << 20,
        "{} bytes: too small to be split",
        whole.len()
    );
    let records = |text: &str| {
        ncu::parse_bytes_with(
            Path::new("big.csv"),
            text.as_bytes(),
            &ReadOptions::default(),
        )
        .unwrap()
        .records
    };
    let (all, first, second) = (
        records(&whole),
        records(&page(0..250)),
        records(&page(250..600)),
    );
    assert_eq!(all.len(), 600);
    for (i, (r, half)) in all.iter().zip(first.iter().chain(&second)).enumerate() {
        // The second half's lines follow the first half's 250 rows.
        let shift = if i < 250 { 0 } else { 250 };
        assert_eq!(
            (&r.kernel, r.launch_id, r.line),
            (&half.kernel, half.launch_id, half.line + shift),
            "launch {i}"
        );
        let (ncu::Page::Raw(a), ncu::Page::Raw(b)) = (&r.page, &half.page) else {
            panic!("launch {i} is not of a raw page");
        };
        let cells =
            |m: &ncu::RawMetrics| m.iter().map(|(_, v)| format!("{v:?}")).collect::<Vec<_>>();
        assert_eq!(cells(a), cells(b), "launch {i}");
    }
}
