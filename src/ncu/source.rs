//! The source page (`--page source --print-source sass`, or `cuda,sass`): per kernel a
//! marker line, a header (which differs between kernels) and one row per SASS
//! instruction with its warp-stall samples. ncu may print a kernel's block twice.

use super::error::ParseError;
use super::input::CsvText;
use super::launch::LaunchInfo;
use super::listing::{CudaLine, SassLine, SourceListing, opcode_class};
use super::record::{KernelRecord, Page};
use super::rows::{Ending, csv_error, is_blank, length_error, more_rows, reader};
use super::stall::StallReason;
use super::value::parse_count;
use std::collections::HashSet;
use std::path::Path;

/// Where the interesting columns of one block's header are.
struct Header {
    names: Vec<String>,
    width: usize,
    address: usize,
    sass: usize,
    line_no: Option<usize>,
    cuda_text: Option<usize>,
    samples: Option<usize>,
    not_issued: Option<usize>,
    executed: Option<usize>,
    stalls: Vec<(usize, StallReason)>,
    /// Whether the samples a line's named columns leave out of "All Samples" are
    /// `warpgroup_arrive` ones (see [`Header::new`]).
    remainder_is_warpgroup_arrive: bool,
}

impl Header {
    fn new(path: &Path, line: u64, row: &csv::StringRecord) -> Result<Header, ParseError> {
        let names: Vec<&str> = row.iter().collect();
        let find = |n: &str| names.iter().position(|c| *c == n);
        let address = find("Address").ok_or_else(|| {
            ParseError::at(path, line, "the source block's header lacks \"Address\"")
        })?;
        // "Source" may stand twice (cuda,sass): the SASS is the one after "Address".
        let sass = names
            .iter()
            .enumerate()
            .skip(address + 1)
            .find(|(_, n)| **n == "Source")
            .map(|(i, _)| i)
            .or_else(|| find("Source"))
            .ok_or_else(|| {
                ParseError::at(path, line, "the source block's header lacks \"Source\"")
            })?;
        let line_no = find("Line No");
        let cuda_text = line_no.and_then(|_| find("Source").filter(|&i| i < address));
        let stall_columns: Vec<(usize, &str)> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with("stall_") && !n.ends_with("(Not Issued)"))
            .map(|(i, n)| (i, &**n))
            .collect();
        let stalls: Vec<(usize, StallReason)> = stall_columns
            .iter()
            .filter_map(|&(i, n)| StallReason::from_name(n).map(|r| (i, r)))
            .collect();
        let all_samples = find("Warp Stall Sampling (All Samples)");
        // ncu 2025.3 samples `warpgroup_arrive` (the raw page has
        // `smsp__pcsamp_warps_issue_stalled_warpgroup_arrive`) and counts those samples in
        // "All Samples", but its source page has no `stall_warpgroup_arrive` column: on
        // such a line All Samples exceeds the sum of the named `stall_*` columns. On every
        // bundled flash-attention version that has any, the remainder sits on HGMMA lines
        // and adds up to the raw page's counter exactly (v11: 669 of 9,559 samples, v12:
        // 687, v17: 16, v29: 22), so it is counted as that reason.
        // Only where every stall column is one stallscope knows (a column of a newer ncu
        // would leave its samples in the remainder too), and only on the warpgroup MMA
        // lines that reason stalls (see `read_row`).
        let remainder_is_warpgroup_arrive = all_samples.is_some()
            && stalls.len() == stall_columns.len()
            && !stalls
                .iter()
                .any(|&(_, r)| r == StallReason::WarpgroupArrive);
        Ok(Header {
            names: names.iter().map(|n| n.to_string()).collect(),
            width: names.len(),
            address,
            sass,
            line_no,
            cuda_text,
            // The names of ncu 2022 on, of 2021 ("… Cycles") and of 2020 ("Sampling Data").
            samples: all_samples
                .or_else(|| find("Warp Stall Sampling (All Cycles)"))
                .or_else(|| find("Sampling Data (All)")),
            not_issued: find("Warp Stall Sampling (Not-issued Samples)")
                .or_else(|| find("Warp Stall Sampling (Not-issued Cycles)"))
                .or_else(|| find("Sampling Data (Not Issued)")),
            executed: find("Instructions Executed"),
            stalls,
            remainder_is_warpgroup_arrive,
        })
    }
}

/// A block being read.
struct Block {
    kernel: String,
    line: u64,
    header: Option<Header>,
    listing: SourceListing,
    current_cuda_line: Option<u32>,
    /// Addresses already listed: ncu may list a function's instructions again after a
    /// "..." row; the first listing is kept.
    seen: HashSet<u64>,
    /// The samples of the listing so far.
    total: u128,
}

pub fn parse(
    path: &Path,
    csv: &CsvText,
    ending: &mut Ending,
) -> Result<Vec<KernelRecord>, ParseError> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut file: Option<String> = None;
    let mut rows = reader(&csv.text).into_records();
    while let Some(row) = rows.next() {
        let row = row.map_err(|e| csv_error(path, csv, e))?;
        let line = csv.file_line(row.position().map_or(0, |p| p.line()));
        let first = row.get(0).unwrap_or_default();
        let marker_value = || row.get(1).unwrap_or_default().to_string();
        match first {
            _ if is_blank(&row) => continue,
            "File Path" if row.len() <= 3 => {
                file = Some(marker_value());
                continue;
            }
            "Kernel Name" | "Function Name" if row.len() <= 3 => {
                blocks.push(Block {
                    kernel: marker_value(),
                    line,
                    header: None,
                    listing: SourceListing {
                        lines: Vec::new(),
                        cuda_lines: Vec::new(),
                        file: file.clone(),
                    },
                    current_cuda_line: None,
                    seen: HashSet::new(),
                    total: 0,
                });
                continue;
            }
            _ => {}
        }
        let Some(block) = blocks.last_mut() else {
            return Err(ParseError::at(
                path,
                line,
                "source page row before any \"Kernel Name\" line",
            ));
        };
        if let Err(e) =
            read_row(path, block, &row, line).and_then(|()| ending.check_row(path, &row, line))
        {
            // The block being read is the cut one.
            blocks.pop();
            ending.cut(e, more_rows(&mut rows), blocks.len())?;
            break;
        }
    }
    if blocks.last().is_some_and(|b| b.header.is_none()) {
        let block = blocks.pop().expect("checked above");
        ending.cut(before_header(path, &block), false, blocks.len())?;
    }

    let mut records: Vec<KernelRecord> = Vec::new();
    for block in blocks {
        if block.header.is_none() {
            return Err(before_header(path, &block));
        }
        // ncu may print the same kernel's block twice: keep one (a repeat cut short is
        // the start of the first).
        let repeat = records.iter().any(|r| {
            r.kernel == block.kernel
                && matches!(&r.page, Page::Source(l) if l.lines.starts_with(&block.listing.lines))
        });
        if repeat {
            continue;
        }
        records.push(KernelRecord {
            kernel: block.kernel,
            launch_id: None,
            process_id: None,
            launch: LaunchInfo::default(),
            page: Page::Source(block.listing),
            line: block.line,
        });
    }
    Ok(records)
}

fn before_header(path: &Path, block: &Block) -> ParseError {
    ParseError::at(
        path,
        block.line,
        format!(
            "the source block of {} ends before its header",
            block.kernel
        ),
    )
}

/// Reads one row of a block: its header, an instruction or a CUDA line.
fn read_row(
    path: &Path,
    block: &mut Block,
    row: &csv::StringRecord,
    line: u64,
) -> Result<(), ParseError> {
    let Some(header) = &block.header else {
        block.header = Some(Header::new(path, line, row)?);
        return Ok(());
    };
    if row.len() != header.width {
        return Err(length_error(path, line, row.len(), header.width, "source"));
    }
    let cells = Cells {
        path,
        line,
        header,
        row,
    };
    let address = row[header.address].trim();
    if address == "..." {
        return Ok(());
    }
    if let (Some(ln), true) = (header.line_no, address == "-" || address.is_empty()) {
        // A CUDA source line of a cuda,sass listing.
        let number = row[ln].trim().parse::<u32>().ok();
        block.current_cuda_line = number;
        if let Some(number) = number {
            block.listing.cuda_lines.push(CudaLine {
                line: number,
                text: header
                    .cuda_text
                    .map(|i| row[i].to_string())
                    .unwrap_or_default(),
                samples: cells.count(header.samples)?.unwrap_or(0),
            });
        }
        return Ok(());
    }
    let address = parse_address(address).ok_or_else(|| {
        ParseError::at(
            path,
            line,
            format!("{address:?} is not an instruction address"),
        )
    })?;
    if !block.seen.insert(address) {
        return Ok(());
    }
    let text = row[header.sass].trim();
    let opcode = opcode_class(text);
    let (stalls, samples) = cells.samples(opcode)?;
    block.total += u128::from(samples);
    if block.total > u128::from(u64::MAX) {
        return Err(ParseError::at(
            path,
            line,
            format!(
                "the samples of {} add up to more than {}, more than any listing holds",
                block.kernel,
                u64::MAX
            ),
        ));
    }
    block.listing.lines.push(SassLine {
        address,
        opcode: opcode.into(),
        text: text.into(),
        samples,
        samples_not_issued: cells.count(header.not_issued)?.unwrap_or(0),
        executed: cells.count(header.executed)?,
        stalls,
        cuda_line: block.current_cuda_line,
    });
    Ok(())
}

/// The cells of one row of a source block, read by its header; errors name the file,
/// the line and the column.
struct Cells<'a> {
    path: &'a Path,
    line: u64,
    header: &'a Header,
    row: &'a csv::StringRecord,
}

impl Cells<'_> {
    /// The count in column `i`, at most `max`; `None` where there is no such column.
    fn count_to(&self, i: Option<usize>, max: u64) -> Result<Option<u64>, ParseError> {
        match i {
            None => Ok(None),
            Some(i) => parse_count(&self.row[i], max).map_err(|e| {
                ParseError::at(
                    self.path,
                    self.line,
                    format!("column {}: {e}", self.header.names[i]),
                )
            }),
        }
    }

    fn count(&self, i: Option<usize>) -> Result<Option<u64>, ParseError> {
        self.count_to(i, u64::MAX)
    }

    /// An instruction's samples by stall reason and in all (its named columns' sum where
    /// there is no "All Samples"), checked against each other; for an `opcode` of
    /// HGMMA, the samples the named columns leave out counted as `warpgroup_arrive`
    /// where the header says they are.
    fn samples(&self, opcode: &str) -> Result<(Box<[u32]>, u64), ParseError> {
        let (path, line, header) = (self.path, self.line, self.header);
        let mut stalls = vec![0u32; StallReason::COUNT].into_boxed_slice();
        for &(i, reason) in &header.stalls {
            let n = self.count_to(Some(i), u32::MAX.into())?.unwrap_or(0);
            stalls[reason.index()] = u32::try_from(n).expect("checked against u32::MAX");
        }
        let named: u64 = stalls.iter().map(|&n| u64::from(n)).sum();
        let samples = match self.count(header.samples)? {
            Some(n) => n,
            None => named,
        };
        let selected = u64::from(stalls[StallReason::Selected.index()]);
        if selected > samples {
            return Err(ParseError::at(
                path,
                line,
                format!(
                    "the line's selected samples ({selected}) exceed all its samples ({samples})"
                ),
            ));
        }
        if let Some(i) = header.samples.filter(|_| named > samples) {
            return Err(ParseError::at(
                path,
                line,
                format!(
                    "the line's stall_* columns add up to {named} samples, more than its {:?} ({samples})",
                    header.names[i]
                ),
            ));
        }
        if header.remainder_is_warpgroup_arrive && samples > named && opcode == "HGMMA" {
            let rest = u32::try_from(samples - named).map_err(|_| {
                ParseError::at(
                    path,
                    line,
                    format!(
                        "the line's samples ({samples}) exceed its stall_* columns by more than {}",
                        u32::MAX
                    ),
                )
            })?;
            stalls[StallReason::WarpgroupArrive.index()] = rest;
        }
        Ok((stalls, samples))
    }
}

fn parse_address(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}
