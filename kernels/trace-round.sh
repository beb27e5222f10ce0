#!/usr/bin/env bash
# One device round for the pipeline traces (run from the repository root with the release
# binary, and target/release/gpu-tests, carried): what a mark costs taken apart, the GEMM
# traces, then the flash-attention traces in batches of five (a batch is stored only when
# all its versions decode), then the two-stream schedule test on v29 (expected to fail:
# its counters are module globals) and on v30; each step inside the 600 s limit.
# TRACE_VARIANTS (default "0 2 5") names the mark's variants trace-cost times; ROUND_S
# (default 590) is the round's whole time, which every step's deadline keeps inside.
set -u
R=${ROUND_S:-590}
export TRACE_VARIANTS=${TRACE_VARIANTS:-0 2 5} TRACE_ROUNDS=3 TRACE_ARGS="--regime burst --rounds 3" DEADLINE=$((R * 2 / 3))
# COST=0 leaves trace-cost out (each trace's own overhead is timed by the trace step).
timeout $((R * 2 / 3)) kernels/h200-round.sh doctor $([ "${COST:-1}" = 1 ] && echo trace-cost) gemm-trace
# The two-stream schedule test on v29 (it fails there) and v30: part3-round.sh's step,
# in what is left.
two_stream() { STEPS=two-stream TWO_STREAM="v29 v30" ROUND_S=$((R - SECONDS)) kernels/part3-round.sh; }
# The versions the notes and the README tell of first, so a short round still has them.
first=1
for b in "v13 v14 v18 v28 v30" "v10 v11 v12 v15 v16" "v17 v19 v20 v21 v22" "v23 v24 v25 v26 v27" "v29"; do
  left=$((R - 30 - SECONDS)); [ $left -lt 30 ] && { echo "== batch $b skipped ($SECONDS s)"; continue; }
  TRACE_VERSIONS="$b" timeout $left kernels/h200-round.sh trace
  [ $first = 1 ] && { two_stream; first=0; }
done
# Flash-attention v30 against v29 and the baselines, sustained, five rounds, in one run
# at the reference shapes and the causal 8k shape, while time is left.
left=$((R - SECONDS))
if [ $left -gt 60 ]; then
  echo "== v30 against v29 and the baselines ($SECONDS s) $(nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader)"
  timeout $left target/release/stallscope run v29 v30 --baselines --rounds 5 --no-save --json \
    --shape 1,64,1024,128 --shape 1,16,8192,128 --shape 1,16,8192,128:causal > "$OUT/v30-vs.json"
  python3 - "$OUT/v30-vs.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"no comparison: {e}")
for c in doc["comparisons"]:
    r = {x["version"]: x for x in c["results"]}
    for v in ("v29", "v30"):
        if v in r and "cudnn" in r:
            print(c["shape"], v, "%.1f us" % r[v]["median_us"], "cudnn/v = %.4f" % (r["cudnn"]["median_us"] / r[v]["median_us"]),
                  "MHz %.0f vs %.0f" % (r[v]["sm_clock_mhz"], r["cudnn"]["sm_clock_mhz"]))
PY
fi
echo "== total $SECONDS s"
