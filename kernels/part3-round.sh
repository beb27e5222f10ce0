#!/usr/bin/env bash
# One device round for flash-attention part 3 (run from the repository root with the
# release binary and target/release/gpu-tests carried): the two-stream schedule test on
# v29 (expected to fail: its counters are module globals) and on v30; which version is
# fastest at the small shapes (fewer 128-row query tiles than SMs), burst, a few rounds,
# the input cases checked at the first shape only (a survey to choose a path by); then SURVEY_VERSIONS against
# the baselines at the reference shapes, sustained. Everything it prints goes to
# $OUT/part3-round.log, the JSON of each run to $OUT. ROUND_S (default 560) bounds the
# round; each step gets what is left.
set -u
OUT=${OUT:-/tmp/stallscope-out}; mkdir -p "$OUT"
R=${ROUND_S:-560}
BIN=target/release/stallscope
export STALLSCOPE_CACHE=/tmp/stallscope-cache
exec > >(tee -a "$OUT/part3-round.log") 2>&1
clock() { nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; }
echo "== $(date -u +%FT%TZ) $(clock)"
left() { echo $((R - SECONDS)); }
step() { [ $(left) -gt ${2:-20} ] || { echo "== $1 skipped ($SECONDS s)"; return 1; }; echo "== $1 ($SECONDS s) $(clock)"; }
STEPS=${STEPS:-two-stream survey reference}
for s in $STEPS; do case $s in
  two-stream)
    for v in ${TWO_STREAM:-v29 v30}; do
      step "two-stream test on $v" || continue
      STALLSCOPE_TWO_STREAM_VERSION=$v timeout $(left) target/release/gpu-tests --test-threads 1 gpu_two_launches 2>&1 | tail -12
    done ;;
  survey)
    # Shapes with fewer 128-row query tiles than SMs (H = 16: B*S/8 tiles), then two larger.
    # The first shape's run checks every candidate on the input cases too (each path of a
    # version that has them); the others check the timed shape only.
    cases=""
    for sh in ${SURVEY_SHAPES:-1,16,512,128 1,16,1024,128 2,16,1024,128 1,16,2048,128 1,16,1024,128:causal 1,16,2048,128:causal 4,16,1024,128:causal}; do
      step "survey $sh" 40 || continue
      f=$OUT/survey-${sh//[,:]/_}.json
      timeout $(left) $BIN run ${SURVEY_VERSIONS:-v12 v13 v14 v18 v28 v30} --baselines --regime burst \
        --rounds ${SURVEY_ROUNDS:-2} $cases --no-save --json --shape "$sh" > "$f"
      cases=--no-cases
    done ;;
  reference)
    for sh in ${REF_SHAPES:-1,64,1024,128 1,16,8192,128 1,16,8192,128:causal}; do
      step "reference $sh" 60 || continue
      timeout $(left) $BIN run ${REF_VERSIONS:-v29 v30} --baselines --rounds ${REF_ROUNDS:-3} --no-save --json \
        --shape "$sh" > "$OUT/reference-${sh//[,:]/_}.json"
    done ;;
esac; done
# A line per candidate of every run: shape, candidate, median µs, ratio to cuDNN, clock, energy.
python3 - "$OUT" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        doc = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); continue
    for c in doc.get("comparisons", []):
        r = {x["version"]: x for x in c["results"]}
        cud = r.get("cudnn", {}).get("median_us")
        print("--", os.path.basename(f))
        for v, x in sorted(r.items(), key=lambda kv: kv[1].get("median_us") or 1e18):
            us = x.get("median_us")
            if not us:
                print(f"   {v:14s} {x.get('status')} {str(x.get('message',''))[:100]}"); continue
            rs = x.get("rounds") or [{}]
            mhz = sum(q.get("sm_clock_mhz") or 0 for q in rs) / len(rs)
            mj = sum(q.get("energy_mj") or 0 for q in rs) / len(rs)
            print(f"   {v:14s} {us:9.1f} us  cudnn/v {cud/us if cud else float('nan'):.3f}  {mhz:5.0f} MHz  {mj:7.1f} mJ")
PY
echo "== total $SECONDS s"
# The device returns a few files only: the runs go back packed in one.
(cd "$OUT" && tar czf part3-runs.tgz ./*.json && rm -f ./*.json)
