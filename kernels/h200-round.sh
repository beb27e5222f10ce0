#!/usr/bin/env bash
# One round on the GPU machine, run from the repository root with the release binary
# (and optionally the GPU test binaries) carried along:
#   kernels/h200-round.sh STEP...
# Steps: selftest, tests, quick (the best versions and the baselines at the two
# reference shapes, sustained and burst), ladder (every version and the baselines at
# the three shapes, sustained, stored in profiles/), repeat (the best version and
# cuDNN again, sustained), profile (one version, to see that profiling works).
# Everything it prints is also logged to $OUT/round.log; the profiles ladder is packed
# into $OUT/profiles.tgz at the end, so a round cut short still returns what it did.
set -uo pipefail
BIN=${BIN:-target/release/stallscope}
OUT=${OUT:-/tmp/stallscope-out}
BEST=${BEST:-v28}
mkdir -p "$OUT"
export STALLSCOPE_CACHE=/tmp/stallscope-cache
exec > >(tee -a "$OUT/round.log") 2>&1
steps=${*:-selftest tests quick}
big=1,16,8192,128

pack() { tar czf "$OUT/profiles.tgz" profiles/flash-attention 2>/dev/null; }
trap pack EXIT

clock() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader; }

echo "== $(date -u +%FT%TZ) steps: $steps"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
for step in $steps; do
  echo "== $step $(date -u +%T) $(clock)"
  case $step in
    selftest)
      $BIN run all --kernels kernels/selftest --baselines --timeout 30 --rounds 1 --regime burst \
        --profiles /tmp/selftest-profiles
      cp /tmp/selftest-profiles/selftest/runs.json "$OUT/selftest-runs.json" ;;
    tests)
      for t in target/release/gpu-tests target/release/kernels-tests; do
        [ -x "$t" ] && "$t" --test-threads 1
      done ;;
    quick)
      for regime in sustained burst; do
        $BIN run v27 $BEST --baselines --regime $regime --no-save --json > "$OUT/quick-$regime-1k.json"
        $BIN report --help >/dev/null
        $BIN run v27 $BEST --baselines --regime $regime --no-save --shape $big --json > "$OUT/quick-$regime-8k.json"
      done
      $BIN run v27 $BEST --baselines --no-save ;;
    ladder)
      $BIN run all --baselines
      $BIN run all --baselines --shape $big
      $BIN run all --baselines --causal --shape $big ;;
    repeat)
      for i in 1 2; do
        $BIN run $BEST --baselines --no-save --json > "$OUT/repeat$i-1k.json"
        $BIN run $BEST --baselines --no-save --shape $big --json > "$OUT/repeat$i-8k.json"
      done ;;
    profile)
      $BIN profile v01
      $BIN report --ladder flash-attention | head -5 ;;
    *) echo "unknown step $step" ;;
  esac
done
echo "== done $(date -u +%FT%TZ) $(clock)"
