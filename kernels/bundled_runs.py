"""What the README's and the notes' run tables read: the flash-attention ladder's
bundled run results as `stallscope report --format json` gives them at the three
shapes. Shared by readme-run-table.py and notes-run-tables.py."""
import json, subprocess

LADDER = "flash-attention"
SHAPES = ["1,64,1024,128", "1,16,8192,128", "1,16,8192,128:causal"]


def report(exe, shape):
    """Every version's report entry at the shape, by id."""
    out = subprocess.run([exe, "report", "--ladder", LADDER, "--format", "json",
                          "--shape", shape], capture_output=True, text=True)
    out.check_returncode()
    return {v["id"]: v for v in json.loads(out.stdout)["ladders"][0]["versions"]}


def shape_text(entry):
    """A result's or a comparison's shape as `--shape` writes it (1,16,8192,128:causal):
    schema 3 keeps the kind and its flags in the shape object, schemas 1 and 2 kept
    attention's `causal` beside it."""
    s = entry["shape"]
    dims = ",".join(str(v) for k, v in s.items() if k != "kind" and not isinstance(v, bool))
    flags = [k for k, v in s.items() if v is True]
    if entry.get("causal") is True and "causal" not in flags:
        flags.append("causal")
    return dims + "".join(":" + f for f in flags)


def run_at(v, shape):
    """The version's run result at the shape: the latest not of the burst regime, else
    the latest (as the ladder shows it)."""
    at = [r for r in v["runs"] if shape_text(r) == shape]
    sustained = [r for r in at if (r.get("protocol") or {}).get("regime") != "burst"]
    return (sustained or at)[-1]
