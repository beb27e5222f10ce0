"""The same raw page through pandas, for the README's comparison.

Run after `cargo bench --bench parse_raw` (which writes the file):
    taskset -c 0 python3 benches/pandas_read_csv.py
Times pd.read_csv with thousands separators and the units row skipped (parsing only, no
analysis), median of 7 runs. With --once it reads the file once, selects per kernel what
`stallscope report` shows of each launch (duration, stall shares, top reason) and exits:
the script a user would write, to time as a whole process beside
`stallscope report FILE --format json`.
"""
import os
import statistics
import sys
import time

import pandas as pd

path = os.path.join(os.path.dirname(__file__), "..", "target", "bench", "raw_1000.csv")
size = os.path.getsize(path)


def per_kernel(df):
    """What `stallscope report` selects of each launch, by kernel: its duration and its
    warp-state samples, each stall reason's share of the launch's samples and the top
    reason (the `_not_issued` columns are a subset of the others, as stallscope reads
    them)."""
    stalls = [
        c
        for c in df.columns
        if c.startswith("smsp__pcsamp_warps_issue_stalled_") and not c.endswith("_not_issued")
    ]
    out = {}
    for kernel, launches in df.groupby("Kernel Name", sort=False):
        samples = launches[stalls].astype(float)
        shares = samples.div(samples.sum(axis=1), axis=0)
        out[kernel] = {
            "duration": launches["gpu__time_duration.sum"].astype(float).tolist(),
            "shares": shares.to_dict("records"),
            "top": shares.idxmax(axis=1).tolist(),
        }
    return out


if "--once" in sys.argv[1:]:
    df = pd.read_csv(path, skiprows=[1], thousands=",", low_memory=False)
    assert len(df) == 1000
    kernels = per_kernel(df)
    assert sum(len(k["top"]) for k in kernels.values()) == 1000
    sys.exit(0)
times = []
for _ in range(8):
    t = time.perf_counter()
    df = pd.read_csv(path, skiprows=[1], thousands=",", low_memory=False)
    times.append(time.perf_counter() - t)
    assert len(df) == 1000
med = statistics.median(times[1:])
print(f"pandas {pd.__version__} read_csv: {size / 1e6:.1f} MB in {med * 1e3:.0f} ms median → {size / 1e6 / med:.0f} MB/s")
