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


def run_at(v, shape):
    """The version's run result at the shape: the latest not of the burst regime, else
    the latest (as the ladder shows it)."""
    dims, causal = shape.split(":")[0], shape.endswith(":causal")
    b, h, s, d = (int(x) for x in dims.split(","))
    want = {"b": b, "h": h, "s": s, "d": d}
    at = [r for r in v["runs"] if r["shape"] == want and r["causal"] == causal]
    sustained = [r for r in at if (r.get("protocol") or {}).get("regime") != "burst"]
    return (sustained or at)[-1]
