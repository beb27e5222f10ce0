#!/usr/bin/env bash
# One device round for flash-attention part 3 (run from the repository root with the
# release binary and target/release/gpu-tests carried). Steps (STEPS, in order; default
# "two-stream paths survey grid"):
#   two-stream  the two-stream schedule test on TWO_STREAM (default v36; v29 fails it:
#               two launches through one loaded module share its globals);
#   paths       the GPU test of the small-problem paths of v31-v36 (both kernels, correct);
#   survey      SURVEY_VERSIONS with the baselines at SURVEY_SHAPES, burst, SURVEY_ROUNDS
#               rounds: the first shape's run checks the input cases too, the others only
#               their timed shape (by default v34-v36 at the batched causal
#               shape where v28-v32 fall furthest behind cuDNN, and the path's shapes);
#   grid        GRID_VERSIONS with the baselines over 8,16,1536 causal and B in {8,4,2,1}
#               x S in {512..4096} (H = 16), causal first, one round each, in the
#               GRID_REGIME (default burst; sustained takes longer and reads energy);
#   reference   REF_VERSIONS with the baselines at the reference shapes, sustained;
#   ladder      every version with the baselines at the reference shapes, burst,
#               LADDER_ROUNDS rounds (the sustained side of the whole table is the
#               2026-12-03 run of v01-v28 and the reference step's);
#   profile     ncu on PROFILE_VERSIONS at the reference shape, the exports packed in
#               $OUT/part3-profiles.tgz (profiles/flash-attention/vNN and ladder.toml).
# Everything it prints goes to $OUT/part3-round.log, the runs come back packed in
# $OUT/part3-runs.tgz. ROUND_S (default 560) bounds the round; each step gets what is left.
set -u
OUT=${OUT:-/tmp/stallscope-out}
# The round's runs, apart from whatever else $OUT holds (a trace round calls this too).
RUNS=$OUT/part3-runs; mkdir -p "$RUNS"
R=${ROUND_S:-560}
BIN=target/release/stallscope
export STALLSCOPE_CACHE=/tmp/stallscope-cache
exec > >(tee -a "$OUT/part3-round.log") 2>&1
clock() { nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; }
echo "== $(date -u +%FT%TZ) $(clock)"
left() { echo $((R - SECONDS)); }
step() { [ $(left) -gt ${2:-20} ] || { echo "== $1 skipped ($SECONDS s)"; return 1; }; echo "== $1 ($SECONDS s) $(clock)"; }
STEPS=${STEPS:-two-stream paths survey grid}
# The runs so far, packed after each (a round cut off by the device's limit still
# returns them; the device returns a few files only).
pack() { tar czf "$OUT/part3-runs.tgz.part" -C "$OUT" part3-runs && mv "$OUT/part3-runs.tgz.part" "$OUT/part3-runs.tgz"; }
for s in $STEPS; do case $s in
  two-stream)
    for v in ${TWO_STREAM:-v36}; do
      step "two-stream test on $v" || continue
      STALLSCOPE_TWO_STREAM_VERSION=$v timeout $(left) target/release/gpu-tests --test-threads 1 gpu_two_launches 2>&1 | grep -v '^ *[0-9]*: \|^ *at ' | tail -14
    done ;;
  paths)
    step "the small-problem paths' GPU test" && timeout $(left) target/release/gpu-tests --test-threads 1 gpu_small_problem_paths 2>&1 | tail -8 ;;
  survey)
    cases=""
    for sh in ${SURVEY_SHAPES:-8,16,1536,128:causal 1,16,4096,128:causal 2,16,2048,128:causal 1,16,512,128:causal 4,16,512,128:causal}; do
      step "survey $sh" 40 || continue
      f=$RUNS/survey-${sh//[,:]/_}.json
      timeout $(left) $BIN run ${SURVEY_VERSIONS:-v34 v35 v36} --baselines --regime burst \
        --rounds ${SURVEY_ROUNDS:-2} $cases --no-save --json --shape "$sh" > "$f"
      cases=--no-cases
      pack
    done ;;
  grid)
    for sh in 8,16,1536,128:causal $(for c in ":causal" ""; do for b in 8 4 2 1; do for sq in 512 1024 2048 4096; do
        echo $b,16,$sq,128$c; done; done; done); do
      step "grid $sh" 25 || continue
      timeout $(left) $BIN run ${GRID_VERSIONS:-v34 v36} --baselines --regime ${GRID_REGIME:-burst} --rounds 1 \
        --no-cases --no-save --json --shape "$sh" > "$RUNS/grid-${sh//[,:]/_}.json"
      pack
    done ;;
  reference)
    for sh in ${REF_SHAPES:-1,64,1024,128 1,16,8192,128 1,16,8192,128:causal}; do
      step "reference $sh" 60 || continue
      timeout $(left) $BIN run ${REF_VERSIONS:-v34 v36} --baselines --rounds ${REF_ROUNDS:-3} --no-save --json \
        --shape "$sh" > "$RUNS/reference-${sh//[,:]/_}.json"
      pack
    done ;;
  ladder)
    for sh in ${REF_SHAPES:-1,64,1024,128 1,16,8192,128 1,16,8192,128:causal}; do
      step "ladder $sh" 60 || continue
      timeout $(left) $BIN run all --baselines --regime burst --rounds ${LADDER_ROUNDS:-2} --no-cases \
        --no-save --json --shape "$sh" > "$RUNS/ladder-${sh//[,:]/_}.json"
      pack
    done ;;
  profile)
    for v in ${PROFILE_VERSIONS:-v36}; do
      step "profile $v" 60 || continue
      timeout $(left) $BIN profile "$v" 2>&1 | tail -6
      [ -d profiles/flash-attention/$v ] && profiled="${profiled:-} profiles/flash-attention/$v"
    done
    # The manifest too: a profile of a version new to the bundled ladder adds its entry.
    [ -n "${profiled:-}" ] && tar czf "$OUT/part3-profiles.tgz" profiles/flash-attention/ladder.toml $profiled ;;
esac; done
# Every run of the round as one table (shape by candidate, cuDNN's over each, clocks).
ls "$RUNS"/*.json >/dev/null 2>&1 && python3 kernels/part3-table.py "$RUNS" --clock
echo "== total $SECONDS s"
# The device returns a few files only: the runs go back packed in one.
# (A pack that fails leaves the runs where they are.)
if ls "$RUNS"/*.json >/dev/null 2>&1; then
  pack && rm -rf "$RUNS"
else
  rmdir "$RUNS"
fi
