//! Text files that hold no ncu CSV, recognised so that the error says what they are and
//! what to do: ncu's own messages alone (a run that failed or profiled nothing), and
//! the CSV of other profilers (Nsight Systems' `nsys stats`, nvprof, the Visual
//! Profiler).

use super::error::ParseError;
use std::path::Path;

/// How to get what stallscope reads, for the messages below.
const EXPORT_HOW: &str = "profile with `ncu --set full -o report ./app`, then export `ncu --import report.ncu-rep --csv --page raw > raw.csv` (and `--page details`, `--page source --print-source sass`)";

/// How many lines of a file are looked at for another profiler's header (a program's
/// output may stand in front of it).
const SCAN_LINES: usize = 1000;

/// The longest part of a file's line an error quotes.
const QUOTE_MAX: usize = 160;

/// Why `text`, which holds no line starting an ncu CSV page, is not an export.
pub fn explain(path: &Path, text: &str) -> ParseError {
    other_delimiter(path, text)
        .or_else(|| ncu_messages(path, text))
        .or_else(|| other_profiler(path, text))
        .or_else(|| ncu_listing(path, text))
        .unwrap_or_else(|| {
            let message = if lines(text).any(|(_, l)| is_prof_line(l)) {
                "ncu ran but wrote no CSV, only its ==PROF== lines: profile again with --csv, or export a report with `ncu --import report.ncu-rep --csv --page raw`"
            } else {
                "no ncu CSV found: expected a header line starting with \"ID\", \"Process ID\", \"Kernel Name\" or \"File Path\""
            };
            ParseError::file(path, message)
        })
}

/// An ncu page whose fields another delimiter separates (a spreadsheet saved it in a
/// locale whose list separator is `;`, or as tab-separated text): the delimiter seen, at
/// its line, and what to do.
fn other_delimiter(path: &Path, text: &str) -> Option<ParseError> {
    const FIRST: [&str; 4] = ["ID", "Process ID", "Kernel Name", "File Path"];
    let (line, delimiter) = lines(text).take(SCAN_LINES).find_map(|(n, l)| {
        let unquoted = l.trim_start_matches('\u{feff}');
        FIRST.iter().find_map(|first| {
            let rest = unquoted
                .strip_prefix(&format!("\"{first}\""))
                .or_else(|| unquoted.strip_prefix(first))?;
            [';', '\t', '|']
                .into_iter()
                .find(|d| rest.starts_with(*d))
                .map(|d| (n, d))
        })
    })?;
    let name = match delimiter {
        ';' => "';' (semicolons)",
        '\t' => "tabs",
        _ => "'|'",
    };
    Some(ParseError::at(
        path,
        line,
        format!(
            "the fields of this ncu page are separated by {name}, not by commas as ncu writes them (a spreadsheet saved it so?): export the report again with `ncu --import REPORT --csv --page raw`, or save the file as CSV with ',' as the separator"
        ),
    ))
}

/// A live ncu run that printed its messages and no CSV: the message that says why
/// (an error, else a warning other than a note), at its line, and what to do about it.
fn ncu_messages(path: &Path, text: &str) -> Option<ParseError> {
    let messages: Vec<(u64, &str)> = lines(text).filter(|(_, l)| is_prof_line(l)).collect();
    let find = |level: &str, skip_notes: bool| {
        messages.iter().copied().find(|(_, l)| {
            l.starts_with(level)
                && !(skip_notes && l[level.len()..].trim_start().starts_with("Note:"))
        })
    };
    let cause = find("==ERROR==", false)
        .or_else(|| {
            messages
                .iter()
                .copied()
                .find(|(_, l)| l.contains("No kernels were profiled"))
        })
        .or_else(|| find("==WARNING==", true));
    let (line, message) = cause?;
    let advice = if message.contains("did not match any section") {
        "list the sections this ncu knows with `ncu --list-sections` (their names changed between versions), or use `--set full`"
    } else if message.contains("No kernels were profiled") {
        "no kernel launch matched: check --kernel-name (-k), --launch-skip and --launch-count, and that the program launches its kernels when run without ncu"
    } else if message.contains("returned an error code") {
        "the program failed under ncu: run it without ncu to see its own error, then profile again"
    } else if message.contains("ERR_NVGPUCTRPERM") {
        "this user may not read the GPU's performance counters: run ncu as root, or let users read them (see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
    } else {
        "fix what ncu reports, then profile again with --csv"
    };
    Some(ParseError::at(
        path,
        line,
        format!(
            "ncu wrote no CSV, only its messages: {:?}; {advice}",
            quote(message)
        ),
    ))
}

/// ncu's own tables of what it can collect (`--list-sections`, `--list-sets`): a header
/// line of column names starting with "Identifier", under a rule of dashes.
fn ncu_listing(path: &Path, text: &str) -> Option<ParseError> {
    let (line, what) = lines(text).take(SCAN_LINES).find_map(|(n, l)| {
        let words: Vec<&str> = l.split_whitespace().collect();
        let what = match words.as_slice() {
            ["Identifier", "Display", "Name", "Enabled", ..] => "`ncu --list-sections`",
            ["Identifier", "Sections", "Enabled", ..] => "`ncu --list-sets`",
            _ => return None,
        };
        Some((n, what))
    })?;
    Some(ParseError::at(
        path,
        line,
        format!("this is ncu's list of what it can collect ({what}), not an export; {EXPORT_HOW}"),
    ))
}

/// The CSV of another NVIDIA profiler, named, with the ncu command that gives what
/// stallscope reads.
fn other_profiler(path: &Path, text: &str) -> Option<ParseError> {
    let (line, what) = lines(text)
        .take(SCAN_LINES)
        .find_map(|(n, l)| profiler_of(l).map(|what| (n, what)))?;
    let how = if what.contains("Visual Profiler") {
        "stallscope reads the Visual Profiler's GPU Details table (header `Name,Start Time(ns),Duration(ns),GridX,…`, with metrics collected): export that one instead; on GPUs of compute capability 7.0 and newer"
    } else {
        ""
    };
    Some(ParseError::at(
        path,
        line,
        format!("this is {what}, not an Nsight Compute export; {how}{EXPORT_HOW}"),
    ))
}

/// Which profiler writes a line like this one.
fn profiler_of(line: &str) -> Option<&'static str> {
    let cols = columns(line);
    let has = |name: &str| cols.iter().any(|c| c == name);
    let nsys = "an Nsight Systems `nsys stats` CSV (a timeline summary of the whole run)";
    let nvprof = "nvprof's CSV (`nvprof --csv`; nvprof does not profile GPUs of compute capability 8.0 and newer; ncu replaces it)";
    let nvvp = "the Visual Profiler's (nvvp) GPU trace table (launch timings only, no metrics)";
    let command_line = "the CUDA command-line profiler's log (COMPUTE_PROFILE_CSV, what the Compute Visual Profiler read)";
    // nvprof's own lines: `==12345== Profiling result:`, and `======== …` when it reads
    // a saved profile.
    if let Some(rest) = line.strip_prefix("==") {
        let id = rest.split("==").next().unwrap_or("");
        if (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())) || id.starts_with("======") {
            return Some(nvprof);
        }
    }
    if line.starts_with("# CUDA_PROFILE_LOG_VERSION")
        || line.starts_with("# OPENCL_PROFILE_LOG_VERSION")
    {
        return Some(command_line);
    }
    if cols.len() < 3 {
        return None;
    }
    let ns_columns = cols.iter().filter(|c| c.ends_with("(ns)")).count();
    if ns_columns >= 2 || (has("Time (%)") && has("Name")) || (has("Time(%)") && has("Instances")) {
        return Some(nsys);
    }
    if (has("Type") && has("Time(%)") && has("Calls"))
        || (has("Device") && has("Kernel") && has("Invocations"))
        || (has("Start") && has("Duration") && has("Grid X"))
    {
        return Some(nvprof);
    }
    if has("Duration") && (has("Grid Size") || has("Block Size")) && !has("ID") {
        return Some(nvvp);
    }
    None
}

/// A line's CSV fields, quotes removed; one field when it is not CSV.
fn columns(line: &str) -> Vec<String> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(|c| c.trim().to_string()).collect())
        .unwrap_or_default()
}

/// The lines of a file, numbered from 1, without their line ends.
fn lines(text: &str) -> impl Iterator<Item = (u64, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.trim_end()))
}

/// A line cut to [`QUOTE_MAX`] characters.
fn quote(line: &str) -> String {
    match line.char_indices().nth(QUOTE_MAX) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// `==PROF==`, `==WARNING==`, `==ERROR==` … lines of a live ncu run.
pub fn is_prof_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("==") else {
        return false;
    };
    match rest.find("==") {
        Some(end) => end > 0 && rest[..end].bytes().all(|b| b.is_ascii_uppercase()),
        None => false,
    }
}
