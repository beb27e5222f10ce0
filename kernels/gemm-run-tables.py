#!/usr/bin/env python3
"""Prints the GEMM ladder's run tables (kernels/gemm/README.md and the README's GEMM
section) from the bundled runs, as `stallscope report --ladder gemm --format json
--shape S [--regime burst]` reads them: one table per shape, each version's and
both baselines' median time, TFLOPS, mean SM clock and energy per launch, and its ratio
to cuBLAS in time with stallscope's verdict and in cycles (time × clock), as report's
`verdicts` give them; the sustained and the burst regime in tables of their own, each
naming the GPU its runs were on (the burst regime records no power).

    python3 kernels/gemm-run-tables.py [STALLSCOPE] > /tmp/tables.md

No figure or verdict is computed here: each cell is report's value, rounded.
"""
import json, subprocess, sys

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/stallscope"
LADDER = "gemm"
SHAPES = ["8192,8192,8192", "4096,4096,4096", "4000,4000,4000"]
BASELINE = "cublas"
NAMES = {"cublas": "cuBLAS", "torch-matmul": "torch.matmul"}


def report(shape, regime):
    out = subprocess.run([exe, "report", "--ladder", LADDER, "--format", "json",
                          "--shape", shape, "--regime", regime],
                         capture_output=True, text=True)
    out.check_returncode()
    ladder = json.loads(out.stdout)["ladders"][0]
    return ladder, {v["id"]: v for v in ladder["versions"]}


def shown_run(v, shape, regime):
    """The run report shows at the shape in the regime (the latest of them)."""
    dims = [int(x) for x in shape.split(",")]
    at = [r for r in v["runs"]
          if [r["shape"]["m"], r["shape"]["n"], r["shape"]["k"]] == dims
          and ((r.get("protocol") or {}).get("regime") == "burst") == (regime == "burst")]
    return at[-1] if at else None


def us(x):
    return f"{x:,.0f}" if x >= 1000 else f"{x:.1f}"


def ratio(x):
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}"


def against(v):
    """The time ratio with the verdict (and why, where unclear) and the cycles ratio."""
    if v["id"] == BASELINE:
        return "1", "1"
    s = next((x for x in v["verdicts"] if x["against"] == BASELINE), None)
    if s is None:
        return "—", "—"
    cell = f"{ratio(s['ratio'])}× {s['verdict']}"
    if s["verdict"] == "unclear" and s.get("detail"):
        cell += f" ({s['detail']})"
    cycles = f"{ratio(s['cycles'])}×" if s.get("cycles") is not None else "—"
    return cell, cycles


for shape in SHAPES:
    print(f"**{shape.replace(',', '×')}**\n")
    for regime in ("sustained", "burst"):
        ladder, by_id = report(shape, regime)
        runs = [(v["id"], shown_run(by_id[v["id"]], shape, regime)) for v in ladder["versions"]]
        runs = [(vid, r) for vid, r in runs if r is not None]
        if not runs:
            continue
        gpus = sorted({r["gpu"] for _, r in runs if r.get("gpu")})
        print(f"{regime.capitalize()}, {' and '.join(gpus)}:\n")
        power = regime == "sustained"
        print("| version | µs | TFLOPS | MHz |" + (" mJ |" if power else "")
              + " vs cuBLAS | in cycles |")
        print("|---|---:|---:|---:|" + ("---:|" if power else "") + "---|---:|")
        for vid, r in runs:
            row = [NAMES.get(vid, vid), us(r["median_us"]), f"{r['tflops']:.1f}",
                   f"{r['sm_clock_mhz']:.0f}"]
            if power:
                row.append(f"{r['energy_mj']:,.0f}" if r.get("energy_mj") is not None else "—")
            row += [*against(by_id[vid])]
            print("| " + " | ".join(row) + " |")
        print()
