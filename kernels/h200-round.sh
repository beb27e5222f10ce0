#!/usr/bin/env bash
# One round on the GPU machine, run from the repository root with the release binary
# (and optionally the GPU test binaries) carried along:
#   kernels/h200-round.sh STEP...
# Build the GPU test binaries (cargo test --release --no-run --test gpu --test kernels)
# before the binary (cargo build --release): the test build leaves a
# target/release/stallscope with the tests' fault points (the fault-injection feature),
# and the plain build after it puts the release binary back. The GPU tests use no fault
# point, so either binary runs them alike.
# Steps: doctor, selftest, tests, converge (three separate default runs of the best
# version and the baselines at both reference shapes, and how far their ratios agree), quick (the best versions and the baselines at the two
# reference shapes, sustained and burst), ladder (every version and the baselines at
# the three shapes, sustained, stored in profiles/; ladder-1k, ladder-8k and
# ladder-8k-causal do one shape each), headline (three separate sustained runs of v27,
# v28 and the baselines at both reference shapes with long windows, and a burst run),
# repeat (the best version and cuDNN again, sustained), profile (one version, to see that profiling works), own
# (a program of one's own and a PyTorch script profiled with `profile -- CMD`, a
# .ncu-rep opened), multi (several GPUs: profile all and run all at three shapes with
# --gpus all, timed against one GPU), gemm-build (every GEMM version compiled, with
# ptxas's registers and spills), gemm-check (every GEMM version and baseline at an odd
# shape, burst, one round: correctness), gemm (the GEMM ladder and its baselines at
# 8192³, 4096³ and 4000³, sustained, stored in profiles/gemm; GEMM_SHAPES for others),
# gemm-profile (ncu on every GEMM version and the baselines' kernels into profiles/gemm, at
# GEMM_PROFILE_SHAPE, 4096³ by default), GEMM_VERSIONS=v06,v07 names the versions of the
# gemm, gemm-burst, gemm-check and gemm-profile steps (all by default), GEMM_FRESH=1 starts
# the bundled GEMM results afresh, GEMM_CHECK_TIMEOUT bounds a new version's set-up and
# checks (a hung kernel costs that, not the run's 180 s),
# trace (the pipeline timelines of the marked versions, TRACE_VERSIONS, at the reference
# shape, with what tracing costs; stored in profiles/flash-attention), gemm-trace (the GEMM
# ladder's marked versions alike, at GEMM_PROFILE_SHAPE), trace-cost (the
# experiments' variants of a mark timed against their plain builds, no trace taken),
# gemm-burst (the GEMM ladder and baselines from an idle GPU at the GEMM shapes).
# A step that would start after $DEADLINE seconds (default 540, inside the device's
# 600-second limit) is skipped and says so.
# Everything it prints is also logged to $OUT/round.log; the profiles ladder is packed
# into $OUT/profiles.tgz at the end (PACK=0: not), so a round cut short still returns
# what it did.
set -uo pipefail
BIN=${BIN:-target/release/stallscope}
OUT=${OUT:-/tmp/stallscope-out}
BEST=${BEST:-v28}
mkdir -p "$OUT"
export STALLSCOPE_CACHE=/tmp/stallscope-cache
exec > >(tee -a "$OUT/round.log") 2>&1
steps=${*:-selftest tests quick}
DEADLINE=${DEADLINE:-540}
start=$(date +%s)
big=1,16,8192,128

pack() { [ "${PACK:-1}" = 1 ] && tar czf "$OUT/profiles.tgz" profiles/flash-attention $( [ -d profiles/gemm ] && echo profiles/gemm ) 2>/dev/null; }
trap pack EXIT

# The GEMM versions a step runs: GEMM_VERSIONS (v06,v07,... or "all"), else the default.
gemm_versions() { local v=${GEMM_VERSIONS:-$1}; echo "${v//,/ }"; }

clock() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader; }

echo "== $(date -u +%FT%TZ) steps: $steps"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
for step in $steps; do
  if [ $(( $(date +%s) - start )) -ge "$DEADLINE" ]; then
    echo "== $step skipped: past the ${DEADLINE}-second deadline"; continue
  fi
  echo "== $step $(date -u +%T) +$(( $(date +%s) - start ))s $(clock)"
  case $step in
    doctor)
      $BIN doctor ;;
    selftest)
      $BIN run all --kernels kernels/selftest --baselines --timeout 30 --rounds 1 --regime burst \
        --profiles /tmp/selftest-profiles
      cp /tmp/selftest-profiles/selftest/runs.json "$OUT/selftest-runs.json" ;;
    tests)
      for t in target/release/gpu-tests target/release/kernels-tests; do
        [ -x "$t" ] && "$t" --test-threads 1 ${TESTS_FILTER:-}
      done ;;
    quick)
      for regime in sustained burst; do
        $BIN run v27 $BEST --baselines --regime $regime --no-save --json > "$OUT/quick-$regime-1k.json"
        $BIN report --help >/dev/null
        $BIN run v27 $BEST --baselines --regime $regime --no-save --shape $big --json > "$OUT/quick-$regime-8k.json"
      done
      $BIN run v27 $BEST --baselines --no-save ;;
    ladder|ladder-1k|ladder-8k|ladder-8k-causal)
      # The bundled results are this protocol's alone: the first ladder step starts
      # them afresh; runs.json is copied out after each shape.
      if [ -z "${ladder_started:-}" ]; then rm -f profiles/flash-attention/runs.json; ladder_started=1; fi
      case $step in
        ladder) shapes="1,64,1024,128 $big $big:causal" ;;
        ladder-1k) shapes=1,64,1024,128 ;;
        ladder-8k) shapes=$big ;;
        ladder-8k-causal) shapes=$big:causal ;;
      esac
      for s in $shapes; do
        $BIN run all --baselines --shape $s
        cp profiles/flash-attention/runs.json "$OUT/runs.json"
      done ;;
    headline)
      # Three separate sustained runs of the best versions against the baselines, with
      # long windows (HREPS=50 repetitions of ~10 ms) and HROUNDS=5 rounds; one burst
      # run beside (BURST=0: not).
      for i in 1 2 3; do
        $BIN run v27 v28 --baselines --reps ${HREPS:-50} --rounds ${HROUNDS:-5} --no-save --json \
          --shape 1,64,1024,128 --shape $big > "$OUT/headline$i.json"
        python3 - "$OUT/headline$i.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["comparisons"]:
    r = {x["version"]: x for x in c["results"]}
    for v in ("v27", "v28"):
        print(c["shape"], v, "cudnn/v = %.4f" % (r["cudnn"]["median_us"] / r[v]["median_us"]),
              "MHz %.0f vs %.0f" % (r[v]["sm_clock_mhz"], r["cudnn"]["sm_clock_mhz"]))
PY
      done
      [ "${BURST:-1}" = 1 ] && $BIN run v27 v28 --baselines --regime burst --no-save --json \
        --shape 1,64,1024,128 --shape $big > "$OUT/burst.json" ;;
    converge)
      # The stopping rule's defaults, as a new user runs them: CONVERGE_N (3) separate
      # `run v28 --baselines` at each reference shape, the shapes alternating, each
      # timed; then the spread of cuDNN/v28 over the runs and their verdicts.
      for i in $(seq 1 ${CONVERGE_N:-3}); do
        for s in 1,64,1024,128 $big; do
          t0=$(date +%s.%N)
          $BIN run $BEST --baselines --no-save --json --shape $s ${CONVERGE_ARGS:-} > "$OUT/converge-$i-${s//,/_}.json"
          t1=$(date +%s.%N)
          echo "run $i at $s: $(python3 -c "print(round($t1 - $t0, 1))") s"
        done
      done
      python3 kernels/converge-summary.py "$OUT"/converge-*.json ;;
    repeat)
      for i in 1 2; do
        $BIN run $BEST --baselines --no-save --json > "$OUT/repeat$i-1k.json"
        $BIN run $BEST --baselines --no-save --shape $big --json > "$OUT/repeat$i-8k.json"
      done ;;
    profile)
      $BIN profile v01
      $BIN report --ladder flash-attention | head -5 ;;
    own)
      o=kernels/own-program
      for v in 1 2; do
        nvcc -O3 -lineinfo -arch=sm_90 -DVERSION=$v $o/matmul.cu -o /tmp/mm$v && \
          $BIN profile --ladder own-matmul --version v$v --profiles /tmp/own -- /tmp/mm$v
      done
      $BIN profile --ladder own-sdpa --version cudnn -k regex:cudnn --profiles /tmp/own -- python3 $o/sdpa_once.py
      $BIN report --profiles /tmp/own
      ncu --set full -k regex:mm_ --launch-count 1 -f -o /tmp/mm1 /tmp/mm1 && $BIN report /tmp/mm1.ncu-rep
      tar czf "$OUT/own-profiles.tgz" -C /tmp own ;;
    multi)
      n=$(nvidia-smi -L | wc -l)
      echo "GPUs: $n"
      t0=$(date +%s); $BIN profile all --gpus all --profiles /tmp/multi-profiles; t1=$(date +%s)
      echo "profile all on $n GPUs: $((t1 - t0)) s"
      $BIN run all --baselines --gpus all --no-save --shape 1,64,1024,128 --shape $big --shape $big:causal ;;
    gemm-build)
      $BIN build all --ladder gemm ;;
    gemm-check)
      # Every version and baseline at odd shapes (GEMM_CHECK_SHAPES; M, N and K off every
      # tile), burst, one round: correctness at first and last launch, every case.
      for s in ${GEMM_CHECK_SHAPES:-1000,777,520 129,4097,72 4001,263,1032}; do
        $BIN run $(gemm_versions all) --ladder gemm --baselines --shape $s --regime burst --rounds 1 --no-save --json \
          --timeout ${GEMM_CHECK_TIMEOUT:-180} > "$OUT/gemm-check-${s//,/_}.json"
        python3 - "$OUT/gemm-check-${s//,/_}.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["comparisons"]:
    for r in c["results"]:
        checks = r.get("checks", [])
        bad = [k["case"] + ": " + (k.get("message") or "") for k in checks if k["status"] == "failed"]
        print(c["shape"], r["version"], r["status"], "%d cases" % len(checks), r.get("rel_l2_err"),
              r.get("message") or "", *bad, sep=" | ")
PY
      done ;;
    gemm)
      # GEMM_FRESH=1: the bundled GEMM results start afresh (one GPU, one protocol).
      if [ "${GEMM_FRESH:-0}" = 1 ] && [ -z "${gemm_started:-}" ]; then rm -f profiles/gemm/runs.json; gemm_started=1; fi
      for s in ${GEMM_SHAPES:-8192,8192,8192 4096,4096,4096 4000,4000,4000}; do
        $BIN run $(gemm_versions all) --ladder gemm --baselines --shape $s
        cp profiles/gemm/runs.json "$OUT/gemm-runs.json"
      done ;;
    gemm-profile)
      $BIN profile $(gemm_versions all) --ladder gemm --shape ${GEMM_PROFILE_SHAPE:-4096,4096,4096}
      ps=${GEMM_PROFILE_SHAPE:-4096,4096,4096}
      $BIN profile --ladder gemm --version torch-matmul -k 'regex:gemm|nvjet|xmma|cutlass' \
        --launch-skip 2 --force -- python3 kernels/gemm/baselines/matmul_once.py $ps
      # The cuBLAS baseline's kernel as stallscope's own worker launches it (its third
      # launch); the filter leaves out the ladder's own gemm_vNN kernels that run beside.
      $BIN profile --ladder gemm --version cublas -k 'regex:nvjet|xmma|cutlass|sm90_' \
        --launch-skip 2 --force -- $BIN run v06 --ladder gemm --baselines --shape $ps \
        --regime burst --rounds 1 --no-cases --no-save
      $BIN report --ladder gemm | head -20 ;;
    trace)
      $BIN trace ${TRACE_ARGS:-} ${TRACE_VERSIONS:-v13 v14 v18 v28} ;;
    gemm-trace)
      # The GEMM ladder's marked versions traced at GEMM_PROFILE_SHAPE (4096³), with what
      # tracing costs; stored in profiles/gemm.
      $BIN trace --ladder gemm --shape ${GEMM_PROFILE_SHAPE:-4096,4096,4096} ${TRACE_ARGS:-} \
        $(gemm_versions "v08 v09 v10 v11") ;;
    trace-cost)
      # What a mark costs, taken apart (SS_TRACE_VARIANT 0-5, kernels/stallscope_trace.h):
      # each variant's trace build against its plain build, burst, TRACE_ROUNDS rounds.
      fa=""; gm=""
      for n in ${TRACE_VARIANTS:-0 1 2 3 4 5}; do fa="$fa v13-t$n v28-t$n"; gm="$gm v09-t$n"; done
      $BIN trace --kernels kernels/experiments --no-capture --regime burst \
        --rounds ${TRACE_ROUNDS:-3} $fa
      $BIN trace --kernels kernels/gemm-experiments --no-capture --regime burst \
        --rounds ${TRACE_ROUNDS:-3} --shape 4096,4096,4096 $gm ;;
    gemm-burst)
      # The GEMM ladder and its baselines from an idle GPU (burst), BURST_ROUNDS rounds,
      # stored beside the sustained results.
      for s in ${GEMM_SHAPES:-8192,8192,8192 4096,4096,4096 4000,4000,4000}; do
        $BIN run $(gemm_versions all) --ladder gemm --baselines --shape $s --regime burst --rounds ${BURST_ROUNDS:-3}
        cp profiles/gemm/runs.json "$OUT/gemm-runs.json"
      done ;;
    *) echo "unknown step $step" ;;
  esac
done
echo "== done $(date -u +%FT%TZ) $(clock)"
