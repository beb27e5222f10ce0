#!/usr/bin/env bash
# One round on the GPU machine, run from the repository root with the release binary
# (and optionally the GPU test binary) carried along:
#   kernels/h200-round.sh [selftest] [tests] [runs] [causal] [experiments] [profile]
# Everything it prints is also logged to $OUT/round.log; the profiles ladder is packed
# into $OUT/profiles.tgz at the end, so a round cut short still returns what it did.
set -uo pipefail
BIN=${BIN:-target/release/stallscope}
OUT=${OUT:-/tmp/stallscope-out}
mkdir -p "$OUT"
export STALLSCOPE_CACHE=/tmp/stallscope-cache
exec > >(tee -a "$OUT/round.log") 2>&1
steps=${*:-selftest tests runs causal experiments profile}
big=1,16,8192,128

pack() { tar czf "$OUT/profiles.tgz" profiles/flash-attention 2>/dev/null; }
trap pack EXIT

echo "== $(date -u +%FT%TZ) steps: $steps"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
for step in $steps; do
  echo "== $step"
  case $step in
    selftest)
      $BIN run all --kernels kernels/selftest --baselines --timeout 10 --profiles /tmp/selftest-profiles
      cp /tmp/selftest-profiles/selftest/runs.json "$OUT/selftest-runs.json" ;;
    tests)
      for t in target/release/gpu-tests target/release/kernels-tests; do
        [ -x "$t" ] && "$t" --test-threads 1
      done ;;
    runs)
      $BIN run all --baselines
      $BIN run all --baselines --shape $big ;;
    causal)
      $BIN run all --baselines --causal
      $BIN run all --baselines --causal --shape $big ;;
    experiments)
      $BIN run all --kernels kernels/experiments --no-save
      $BIN run all --kernels kernels/experiments --no-save --shape $big ;;
    profile)
      $BIN profile all
      $BIN report --ladder flash-attention
      ncu --clock-control none --csv --metrics gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__pcsamp_warps_issue_stalled_barrier,launch__registers_per_thread \
        -k regex:attn_v04 --launch-skip 2 --launch-count 1 \
        $BIN __child --mode profile --kernels kernels/flash-attention --version v04 --shape 1,64,1024,128 --seed 1 > "$OUT/metrics_page.csv" ;;
    *) echo "unknown step $step" ;;
  esac
done
echo "== done $(date -u +%FT%TZ)"
