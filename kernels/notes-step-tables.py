#!/usr/bin/env python3
"""Writes the step tables of every ladder note (kernels/LADDER/notes/vNN.md): the tables
under its heading `## Step from vMM (`stallscope report --ladder L --versions vMM,vNN
--format markdown`)` are that command's output on the bundled profiles (the runs per
shape, the profiles' tensor pipe and stall cells, the step on the roofline with ncu's
resolved findings and estimate beside the measured change).

    python3 kernels/notes-step-tables.py [STALLSCOPE] [--write | --check]

STALLSCOPE is the binary (default target/debug/stallscope). --write replaces each
section's tables (from its first table row to the next `## ` heading) with the command's
output and leaves the prose above them as it is; --check exits 1 naming every note whose
tables are not the output; without either it names the notes it would change.
tests/notes_tables.rs checks the same.
"""
import pathlib, shlex, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def tables(binary, command):
    words = shlex.split(command)
    assert words[:2] == ["stallscope", "report"], command
    out = subprocess.run(
        [binary, *words[1:], "--profiles", str(ROOT / "profiles")],
        capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return out.stdout.rstrip("\n").split("\n")


def rewritten(binary, text):
    lines = text.split("\n")
    out, at = [], 0
    while at < len(lines):
        line = lines[at]
        out.append(line)
        at += 1
        if not line.startswith("## Step from ") or " (`" not in line:
            continue
        command = line.split(" (`", 1)[1].removesuffix("`)")
        # The prose above the tables stays.
        while at < len(lines) and not lines[at].startswith("|") and not lines[at].startswith("## "):
            out.append(lines[at])
            at += 1
        end = at
        while end < len(lines) and not lines[end].startswith("## "):
            end += 1
        if at == end:
            continue
        out.extend(tables(binary, command))
        if end < len(lines):
            out.append("")
        elif lines[-1] == "":
            out.append("")
        at = end
    return "\n".join(out)


def main(args):
    binary = next((a for a in args if not a.startswith("--")), str(ROOT / "target/debug/stallscope"))
    changed = []
    for note in sorted(ROOT.glob("kernels/*/notes/*.md")):
        text = note.read_text()
        new = rewritten(binary, text)
        if new != text:
            changed.append(note.relative_to(ROOT))
            if "--write" in args:
                note.write_text(new)
    for c in changed:
        print(("rewrote " if "--write" in args else "differs: ") + str(c))
    return 1 if changed and "--check" in args else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
