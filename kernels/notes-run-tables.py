#!/usr/bin/env python3
"""Writes the measured tables of every flash-attention note (kernels/flash-attention/
notes/vNN.md) from the bundled runs, as stallscope reads them at the three shapes. The
first table is the version's own: per shape its median time, mean SM clock, and cuDNN's
time over the version's with stallscope's verdict against cuDNN (in cycles beside it
where the clocks differ by more than 2 %). The second, where the version has a parent,
is the step from it: the change of the median time in %, the change in cycles (time ×
clock) where the two clocks differ by more than 2 %, and stallscope's verdict against
the parent with its 95 % interval.

    python3 kernels/notes-run-tables.py [STALLSCOPE] [--write | --check] [vNN ...]

STALLSCOPE is the binary (default target/release/stallscope). Without --write or --check
it prints each version's tables; --write rewrites the note's tables (the first ones under
its heading `## Measured (H200, 2026-12-03, …`, from the first `| shape (B,H,S,D) |`
header to the last row of the table after it) and leaves the rest of the note as it is;
--check exits 1 naming every note whose tables are not what it would write. Version ids
limit it to those notes. (No marker comments: stallscope's notes view and HTML report
show raw HTML as text.)

Every figure comes from stallscope: the times, clocks and the verdict against cuDNN from
`report --ladder flash-attention --format json --shape S` (its `runs` and `verdicts`),
the verdict against the parent from `compare vNN --ladder flash-attention --format json
--shape S` (its `speed`: the version's speed-up over its parent, rounds paired by
position, as src/analysis/speed.rs judges it). No verdict is computed here.
tests/notes_tables.rs checks the tables against the bundled runs.json.
"""
import json, pathlib, re, subprocess, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bundled_runs import LADDER, SHAPES, run_at  # noqa: E402
import bundled_runs  # noqa: E402
NOTES = pathlib.Path(__file__).resolve().parent / LADDER / "notes"
HEADING = "## Measured (H200, 2026-12-03"
HEADER = "| shape (B,H,S,D) |"
# Clocks further apart than this get the change in cycles beside the change in time (as
# stallscope's CLOCK_BAND and the README's table).
CLOCK_BAND = 0.02

args = sys.argv[1:]
write = "--write" in args
check = "--check" in args
rest = [a for a in args if a not in ("--write", "--check")]
only = [a for a in rest if re.fullmatch(r"v\d+", a)]
exe = next((a for a in rest if a not in only), "target/release/stallscope")


def stallscope(*argv):
    return subprocess.run([exe, *argv], capture_output=True, text=True)


def report(shape):
    return bundled_runs.report(exe, shape)


def against_parent(vid, shape):
    """The compare document's `speed`: the version's speed-up over its parent at the
    shape (the parent's time over the version's), or None without a parent."""
    out = stallscope("compare", vid, "--ladder", LADDER, "--format", "json", "--shape", shape)
    if out.returncode != 0:
        if "there is no earlier version" in out.stderr:
            return None, None
        sys.exit(f"stallscope compare {vid} --shape {shape}: {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    return doc["a"]["id"], doc["speed"]


def minus(text):
    return text.replace("-", "−")


def time(us):
    """Four significant digits, in ms from 1000 µs."""
    return f"{us:#.4g} µs" if us < 1000 else f"{us / 1000:#.4g} ms"


def pct(x):
    """A change as a fraction, in % with its sign (−: faster)."""
    p = round(x * 100, 1)
    return minus(f"{p:+.1f} %") if p != 0 else "+0.0 %"


def ratio(x):
    return f"{x:.3f}×" if x >= 0.1 else f"{x:#.2g}×"


def verdict(s):
    """stallscope's verdict, with why where it is unclear (`unclear: not converged`)."""
    if s["verdict"] != "unclear" or not s.get("why"):
        return s["verdict"]
    return f"unclear: {s['why'].replace('_', ' ')}"


def interval(speed):
    """The 95 % interval of a speed-up (the parent's time over the version's) as the
    change of the version's time against its parent's, in %: low–high of the speed-up
    read the other way round."""
    return f"{pct(1 / speed['high'] - 1)} to {pct(1 / speed['low'] - 1)}"


def apart(c):
    return c is not None and abs(c - 1) > CLOCK_BAND


def shape_cell(shape):
    return shape.replace(":causal", " causal")


def table(vid, reports):
    """The note's tables: the version's own (time, clock, against cuDNN) and, where it
    has a parent, the step from it (change in time and in cycles, verdict). Two tables,
    so that each fits an 80-column terminal with its header on one line."""
    own, step, parent = [], [], None
    for rep, shape in zip(reports, SHAPES):
        v = rep[vid]
        run = run_at(v, shape)
        t, clock = run["median_us"], run["sm_clock_mhz"]
        s = next(x for x in v["verdicts"] if x["against"] == "cudnn")
        cell = f"{ratio(s['ratio'])}, {verdict(s)}"
        if apart(s.get("clock_ratio")) and s.get("cycles") is not None:
            cell += f"; cycles {ratio(s['cycles'])}"
        own.append([shape_cell(shape), time(t), f"{round(clock)} MHz", cell])
        parent, speed = against_parent(vid, shape)
        if parent is not None:
            pr = run_at(rep[parent], shape)
            cycles = "—"
            if apart(clock / pr["sm_clock_mhz"]):
                cycles = pct(t * clock / (pr["median_us"] * pr["sm_clock_mhz"]) - 1)
            step.append([shape_cell(shape), pct(t / pr["median_us"] - 1), cycles,
                         f"{verdict(speed)} ({interval(speed)})"])
    rows = lambda rs: ["| " + " | ".join(r) + " |" for r in rs]
    lines = [f"{HEADER} time | SM clock | cuDNN / {vid} |", "|---|---:|---:|---|", *rows(own)]
    if parent is not None:
        lines += ["", f"{HEADER} vs {parent} | in cycles | verdict vs {parent} (95 % interval) |",
                  "|---|---:|---:|---|", *rows(step)]
    return "\n".join(lines)


def replaced(text, new, name):
    """The note with its measured table (the first under HEADING) replaced by `new`."""
    lines = text.split("\n")
    at = next((i for i, l in enumerate(lines) if l.startswith(HEADING)), None)
    if at is None:
        sys.exit(f"{name}: no heading {HEADING}…")
    start = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("#")
                  or lines[i].startswith(HEADER)), None)
    if start is None or not lines[start].startswith(HEADER):
        sys.exit(f"{name}: no table {HEADER} … under {HEADING}…")
    # The tables: rows, and a blank line between two tables.
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
        if end + 1 < len(lines) and lines[end] == "" and lines[end + 1].startswith(HEADER):
            end += 1
    return "\n".join(lines[:start] + new.split("\n") + lines[end:])


reports = [report(s) for s in SHAPES]
ids = [vid for vid, v in reports[0].items() if not v["baseline"]]
ids = [vid for vid in ids if not only or vid in only]
stale = []
for vid in ids:
    new = table(vid, reports)
    path = NOTES / f"{vid}.md"
    if not (write or check):
        print(f"{vid}:\n{new}\n")
        continue
    text = path.read_text()
    out = replaced(text, new, path.name)
    if out != text:
        if write:
            path.write_text(out)
        stale.append(vid)
if write:
    print(f"rewrote {len(stale)} of {len(ids)} tables: {' '.join(stale) or 'none'}")
elif check and stale:
    sys.exit(f"not the bundled runs' tables: {' '.join(stale)}")
