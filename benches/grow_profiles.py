#!/usr/bin/env python3
"""How the explorer's first frame grows with the number of versions.

Builds profiles folders whose one ladder is the bundled flash-attention ladder (33
versions) repeated k times under new ids (copy 1 keeps the ids; copy c > 1 prefixes
them with `cN-`, its parents and its runs renamed alike), every copy with its own
copies of the export files, so each is read and analysed as a version of its own.
Then times `stallscope` with STALLSCOPE_FIRST_FRAME_EXIT=1 (the explorer ends after
its first frame; without a terminal it draws on a 120×40 screen in memory) as a whole
process on each folder, with `/usr/bin/time -f "%e %U %S %M"`: wall, user, system
seconds and peak memory (KiB), the median of --runs runs.

Run from the repository root, after `cargo build --release`:

    python3 benches/grow_profiles.py [--copies 1,3,5,10] [--runs 15] [--keep DIR]

The folders are made under a temporary folder (removed at the end unless --keep);
the kernels folder the manifest names (notes and sources) is linked beside them.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

LADDER = "profiles/flash-attention"


def versions_of(manifest):
    """The manifest split into its head and its [[version]] blocks, as text."""
    parts = re.split(r"(?m)^(?=\[\[version\]\]\s*$)", manifest)
    return parts[0], parts[1:]


def block_id(block):
    return re.search(r'(?m)^id = "([^"]+)"', block).group(1)


def renamed(block, prefix, ids):
    """A version block under new ids: its id, its parent, its files' folders."""

    def fix_id(m):
        return f'{m.group(1)} = "{prefix}{m.group(2)}"'

    block = re.sub(r'(?m)^(id|parent) = "([^"]+)"', fix_id, block)

    def fix_file(m):
        folder, rest = m.group(2), m.group(3)
        if folder in ids:
            folder = prefix + folder
        return f'{m.group(1)}"{folder}/{rest}"'

    return re.sub(r'(?m)^(\s+)"([^"/]+)/([^"]+)"', fix_file, block)


def build(root, copies, repo):
    """A profiles folder under `root` with `copies` copies of the ladder; its version count."""
    src = os.path.join(repo, LADDER)
    dst = os.path.join(root, "profiles", "flash-attention")
    os.makedirs(dst)
    os.symlink(os.path.join(repo, "kernels"), os.path.join(root, "kernels"))
    with open(os.path.join(src, "ladder.toml"), encoding="utf-8") as f:
        head, blocks = versions_of(f.read())
    ids = [block_id(b) for b in blocks]
    folders = [d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))]
    with open(os.path.join(src, "runs.json"), encoding="utf-8") as f:
        runs = json.load(f)
    out_blocks, out_runs = [], []
    for c in range(copies):
        prefix = "" if c == 0 else f"c{c + 1}-"
        for d in folders:
            shutil.copytree(os.path.join(src, d), os.path.join(dst, prefix + d))
        out_blocks += [renamed(b, prefix, set(folders)) for b in blocks]
        for r in runs["runs"]:
            r = dict(r)
            r["version"] = prefix + r["version"]
            out_runs.append(r)
    with open(os.path.join(dst, "ladder.toml"), "w", encoding="utf-8") as f:
        f.write(head + "".join(b if b.endswith("\n") else b + "\n" for b in out_blocks))
    runs["runs"] = out_runs
    with open(os.path.join(dst, "runs.json"), "w", encoding="utf-8") as f:
        json.dump(runs, f, indent=2)
    return len(ids) * copies


def measure(exe, profiles, runs):
    env = dict(os.environ, STALLSCOPE_FIRST_FRAME_EXIT="1", STALLSCOPE_PROFILES=profiles)
    rows = []
    for i in range(runs + 1):
        p = subprocess.run(
            ["/usr/bin/time", "-f", "%e %U %S %M", exe],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
        )
        last = p.stderr.strip().splitlines()[-1].split()
        if p.stderr.strip().splitlines()[:-1]:
            sys.exit(f"stallscope warned on {profiles}:\n{p.stderr}")
        wall, user, sys_, kib = map(float, last)
        if i > 0:  # the first run warms the page cache
            rows.append((wall, user + sys_, kib / 1024))
    return [statistics.median(col) for col in zip(*rows)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", default="1,3,5,10")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--exe", default="target/release/stallscope")
    ap.add_argument("--keep", help="build the folders here and keep them")
    a = ap.parse_args()
    repo = os.getcwd()
    exe = os.path.abspath(a.exe)
    base = a.keep or tempfile.mkdtemp(prefix="stallscope-grow-")
    print("| versions | wall (median) | processor time | peak memory |")
    print("|---|---|---|---|")
    results = []
    try:
        for k in [int(x) for x in a.copies.split(",")]:
            root = os.path.join(base, f"x{k}")
            if not os.path.exists(root):
                n = build(root, k, repo)
            else:
                n = 33 * k
            wall, cpu, mib = measure(exe, os.path.join(root, "profiles"), a.runs)
            results.append((n, wall, cpu, mib))
            print(f"| {n} | {wall * 1e3:.0f} ms | {cpu * 1e3:.0f} ms | {mib:.1f} MiB |")
    finally:
        if not a.keep:
            shutil.rmtree(base)
    if len(results) > 1:
        (n0, _, c0, m0), (n1, _, c1, m1) = results[0], results[-1]
        print(
            f"\nfrom {n0} to {n1} versions: {(c1 - c0) / (n1 - n0) * 1e3:.2f} ms of "
            f"processor time and {(m1 - m0) / (n1 - n0) * 1024:.0f} KiB of memory a version"
        )


if __name__ == "__main__":
    main()
