"""Builds the fuzz corpora (fuzz/corpus/TARGET/) from the project's real inputs.

ncu_parse:   the exports of tests/fixtures, whole when small, else cut to their first
             rows and, for wide pages, their first columns; some of them gzipped.
manifest:    every profiles/*/ladder.toml.
recipe:      every kernels/*/recipe.toml.
launch_expr: every grid, block, shared and flops expression of those recipes, at the
             reference shape (the target's input is five u32 then the expression).

Run from anywhere: python3 fuzz/seed.py (run.sh does it when a corpus is missing).
"""
import csv
import gzip
import hashlib
import io
import pathlib
import re
import struct
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
SMALL = 64 * 1024


def put(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def cut_columns(text, n):
    """The CSV with every row cut to its first n fields (still well-quoted)."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in csv.reader(io.StringIO(text)):
        w.writerow(row[:n])
    return out.getvalue()


def exports():
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*")):
        if not path.is_file() or not re.search(r"\.csv(\.gz)?$", path.name):
            continue
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError):
                put("ncu_parse", raw[:SMALL])  # a damaged gzip stays one
                continue
        text = raw.decode("utf-8", errors="replace")
        if len(raw) <= SMALL:
            put("ncu_parse", raw)
        lines = text.split("\n")
        for n in (3, 12, 40):
            head = "\n".join(lines[:n]) + "\n"
            if len(head.encode()) <= SMALL:
                put("ncu_parse", head)
        narrow = cut_columns("\n".join(lines[:12]) + "\n", 40)
        put("ncu_parse", narrow)
        put("ncu_parse", gzip.compress(narrow.encode(), mtime=0))


def manifests():
    for path in sorted((ROOT / "profiles").glob("*/ladder.toml")):
        put("manifest", path.read_bytes())


def recipes():
    shape = struct.pack("<5I", 1, 64, 1024, 128, 132)
    for path in sorted((ROOT / "kernels").glob("*/recipe.toml")):
        text = path.read_text(encoding="utf-8")
        put("recipe", text)
        recipe = tomllib.loads(text)
        kernels = [recipe.get("reference", {}), recipe.get("unfused_softmax", {})]
        kernels += recipe.get("version", [])
        exprs = {recipe.get("flops", "")}
        for k in kernels:
            exprs.update(k.get("grid", []) + k.get("block", []) + [k.get("shared", "0")])
        for e in sorted(x for x in exprs if x):
            put("launch_expr", shape + e.encode())


if __name__ == "__main__":
    exports()
    manifests()
    recipes()
    for t in sorted(CORPUS.iterdir()):
        print(f"{t.name}: {sum(1 for _ in t.iterdir())} seeds")
