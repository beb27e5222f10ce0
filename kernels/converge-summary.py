#!/usr/bin/env python3
"""How far separate `run --json` documents agree: per shape, each candidate's ratio
to the best version (cuDNN/v28 when the best is v28) in each run, its verdict, the
rounds and whether they converged, and the largest ratio over the smallest.
Usage: converge-summary.py RUN.json..."""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundled_runs import shape_text  # noqa: E402

by_shape = defaultdict(list)
for path in sys.argv[1:]:
    try:
        doc = json.load(open(path))
    except Exception as e:  # a run cut short
        print(f"{path}: not read ({e})")
        continue
    for c in doc["comparisons"]:
        shape = shape_text(c)
        by_shape[shape].append((path, c))

for shape, runs in by_shape.items():
    print(f"== {shape}")
    ratios = defaultdict(list)
    for path, c in runs:
        res = {r["version"]: r for r in c["results"]}
        for r in c["results"]:
            if r["status"] != "ok":
                print(f"  {r['version']}: {r['status']} {r.get('message')}")
                continue
            conv = r["protocol"].get("convergence") or {}
            line = (f"  {r['version']:>14} {r['median_us']:9.2f} us  {r.get('sm_clock_mhz') or 0:5.0f} MHz"
                    f"  rounds {r['protocol']['rounds']:2d} {conv.get('stopped', '?'):9}"
                    f" ±{conv.get('interval_pct') or 0:.2f}%  win {min(x['window_ms'] for x in r['rounds']):.0f}-{max(x['window_ms'] for x in r['rounds']):.0f} ms")
            for v in r.get("verdicts", []):
                if v["role"] == "best":
                    # The best version over this one, as cuDNN/v28 reads.
                    ratios[r["version"]].append((1 / v["ratio"], v["verdict"], v.get("why")))
                    line += (f"  best/this {1 / v['ratio']:.4f} [{1 / v['high']:.4f}, {1 / v['low']:.4f}]"
                             f" cyc {1 / v['cycles'] if v.get('cycles') else float('nan'):.4f} {v['verdict']} {v.get('why') or ''}")
            print(line)
        print()
    for cand, xs in ratios.items():
        rs = [x[0] for x in xs]
        words = sorted(set(f"{x[1]}{':' + x[2] if x[2] else ''}" for x in xs))
        print(f"  {cand:>14}: best/this {' '.join(f'{r:.4f}' for r in rs)}  max/min {max(rs) / min(rs):.4f}  verdicts {', '.join(words)}")
