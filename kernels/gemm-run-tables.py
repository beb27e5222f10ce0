#!/usr/bin/env python3
"""Prints the GEMM ladder's run tables (kernels/gemm/README.md and the README's GEMM
section) from the bundled runs, as `stallscope report --ladder gemm --format json
--shape S [--regime burst]` reads them: one table per shape, each version's and
torch.matmul's median time, TFLOPS, mean SM clock and energy per launch (sustained
regime; the burst regime records no power), and its ratio to torch.matmul in time with
stallscope's verdict and in cycles (time × clock), as report's `verdicts` give them.

    python3 kernels/gemm-run-tables.py [STALLSCOPE] > /tmp/tables.md

No figure or verdict is computed here: each cell is report's value, rounded.
"""
import json, subprocess, sys

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/stallscope"
LADDER = "gemm"
SHAPES = ["8192,8192,8192", "4096,4096,4096", "4000,4000,4000"]
BASELINE = "torch-matmul"


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
    ladder, sus = report(shape, "sustained")
    _, bur = report(shape, "burst")
    print(f"**{shape.replace(',', '×')}**\n")
    print("| version | µs | TFLOPS | MHz | mJ | vs torch.matmul | in cycles "
          "| burst µs | TFLOPS | MHz | vs torch.matmul | in cycles |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|")
    for v in ladder["versions"]:
        vid = v["id"]
        rs, rb = shown_run(sus[vid], shape, "sustained"), shown_run(bur[vid], shape, "burst")
        if rs is None and rb is None:
            continue
        row = ["torch.matmul" if vid == BASELINE else vid]
        if rs:
            row += [us(rs["median_us"]), f"{rs['tflops']:.1f}", f"{rs['sm_clock_mhz']:.0f}",
                    f"{rs['energy_mj']:,.0f}", *against(sus[vid])]
        else:
            row += ["—"] * 6
        if rb:
            row += [us(rb["median_us"]), f"{rb['tflops']:.1f}", f"{rb['sm_clock_mhz']:.0f}",
                    *against(bur[vid])]
        else:
            row += ["—"] * 5
        print("| " + " | ".join(row) + " |")
    print()
