#!/usr/bin/env python3
"""Prints the README's table of run results from the bundled runs, as `stallscope report
--format json` reads them at the three shapes (every version's and baseline's median
time, mean SM clock and verdict against cuDNN, and its energy per launch at the
reference shape). tests/readme.rs checks the times, clocks and energies against the
bundled runs.json; this writes them.

    python3 kernels/readme-run-table.py [STALLSCOPE] < README.md > /tmp/table.md

The titles come from the README's current table (read on stdin), by version.
"""
import pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bundled_runs import SHAPES as shapes, report as report_at, run_at  # noqa: E402

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/stallscope"
header = "| version | | 1,64,1024 µs | MHz | vs cuDNN | 1,16,8192 µs | MHz | vs cuDNN | causal 8192 µs | MHz | vs cuDNN | mJ (1k) |"

titles, order = {}, []
lines = sys.stdin.read().splitlines()
at = lines.index(header)
for line in lines[at + 2:]:
    if not line.startswith("|"):
        break
    cells = [c.strip() for c in line.strip("|").split("|")]
    titles[cells[0]] = cells[1]
    order.append(cells[0])


def report(shape):
    return report_at(exe, shape)


def us(x):
    return str(round(x)) if x >= 1000 else f"{x:.4g}"


def ratio(x):
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}"


def against_cudnn(v):
    if v["id"] == "cudnn":
        return "—"
    s = next(x for x in v["verdicts"] if x["against"] == "cudnn")
    cell = f"{ratio(s['ratio'])}× {s['verdict']}"
    c = s.get("clock_ratio")
    if c is not None and abs(c - 1) > 0.02 and s.get("cycles") is not None:
        cell += f" ({ratio(s['cycles'])}× in cycles)"
    return cell


reports = [report(s) for s in shapes]
print(header)
print("|---|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|")
for vid in order:
    row = [vid, titles[vid]]
    for rep, shape in zip(reports, shapes):
        v = rep[vid]
        run = run_at(v, shape)
        row += [us(run["median_us"]), str(round(run["sm_clock_mhz"])), against_cudnn(v)]
    row.append(f"{run_at(reports[0][vid], shapes[0])['energy_mj']:.1f}")
    print("| " + " | ".join(row) + " |")
