#!/usr/bin/env python3
"""Markdown tables of the part-3 device rounds: one row per shape, one column per
candidate (median µs of the run; cuDNN's time over the candidate's in brackets, and the
same in cycles, time × mean SM clock, where the two clocks differ by more than 2 %), from
the `stallscope run --json` files of a folder (kernels/part3-round.sh writes them).

    kernels/part3-table.py kernels/flash-attention/runs/2026-12-07-part3 [--clock]

--clock adds each candidate's mean SM clock (MHz) and energy per launch (mJ, where NVML's
counter stepped inside the windows)."""
import glob
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bundled_runs import shape_text  # noqa: E402


def shape_of(c):
    return shape_text(c["results"][0]).replace(":causal", " causal")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    clock = "--clock" in sys.argv
    if len(args) != 1:
        sys.exit(__doc__)
    rows, names = [], []
    for f in sorted(glob.glob(os.path.join(args[0], "*.json"))):
        try:
            doc = json.load(open(f))
        except (OSError, ValueError) as e:
            print(f"skipped {f}: {e}", file=sys.stderr)
            continue
        for c in doc.get("comparisons", []):
            r = {x["version"]: x for x in c["results"]}
            regime = next((x.get("protocol", {}) or {} for x in c["results"] if x.get("protocol")), {}).get("regime", "?")
            gpu = next((x.get("gpu") for x in c["results"] if x.get("gpu")), "?")
            rows.append((shape_of(c), regime, gpu, os.path.basename(f), r))
            for v in r:
                if v not in names:
                    names.append(v)
    versions = sorted(n for n in names if n.startswith("v"))
    baselines = [n for n in ("cudnn", "fa2", "mem-efficient", "unfused") if n in names]
    cols = versions + baselines
    print("| shape | regime | " + " | ".join(cols) + " | fastest version (time) |")
    print("|---|---|" + "---:|" * len(cols) + "---|")
    for shape, regime, gpu, f, r in rows:
        cud = (r.get("cudnn") or {}).get("median_us")
        cud_mhz = r["cudnn"].get("sm_clock_mhz") if cud else None
        cells = []
        for v in cols:
            x = r.get(v)
            if not x or not x.get("median_us"):
                cells.append("" if not x else x.get("status", ""))
                continue
            us = x["median_us"]
            cell = f"{us:.2f}"
            mhz = x.get("sm_clock_mhz")   # the mean over its timed windows
            if cud and v != "cudnn":
                cell += f" ({cud / us:.3f}×"
                # Time ratios of candidates at clocks over 2 % apart say little alone.
                if mhz and cud_mhz and abs(mhz / cud_mhz - 1) > 0.02:
                    cell += f", cycles {cud * cud_mhz / (us * mhz):.3f}×"
                cell += ")"
            if clock:
                mj = x.get("energy_mj")
                cell += f" {mhz or 0:.0f} MHz" + (f" {mj:.1f} mJ" if mj else "")
            cells.append(cell)
        timed = [(r[v]["median_us"], v) for v in versions if r.get(v, {}).get("median_us")]
        best = min(timed)[1] if timed else ""
        print(f"| {shape} | {regime} | " + " | ".join(cells) + f" | {best} |")


if __name__ == "__main__":
    main()
