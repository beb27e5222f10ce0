#!/usr/bin/env bash
# Runs every fuzz target (or those named) for SECONDS each, one after another, and
# prints how many inputs each executed and whether it found anything.
#   fuzz/run.sh SECONDS [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain. The corpora are
# made by seed.py when missing; findings land in fuzz/artifacts/TARGET/, logs in
# fuzz/logs/TARGET.log.
set -u
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: fuzz/run.sh SECONDS [TARGET...]" >&2
    exit 2
fi
seconds=$1
shift
cd "$(dirname "$0")/.."
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(ncu_parse manifest recipe launch_expr)
[[ -d fuzz/corpus ]] || python3 fuzz/seed.py
mkdir -p fuzz/logs
status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    # Large enough for the seeds (exports are cut to 64 KiB, recipes are about 16 KB),
    # small enough that the run mutates many inputs, not a few large ones.
    case $t in
        ncu_parse) max_len=65536 ;;
        manifest | recipe) max_len=16384 ;;
        *) max_len=4096 ;;
    esac
    cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"fuzz/logs/$t.log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/logs/$t.log" | grep -o '[0-9]*$')
    found=$(find "fuzz/artifacts/$t" -type f 2>/dev/null | wc -l)
    printf '%-12s %12s execs in %ss, exit %d, fuzz/artifacts/%s holds %d input(s)\n' \
        "$t" "${execs:-?}" "$seconds" "$rc" "$t" "$found"
    [[ $rc -eq 0 ]] || status=1
done
exit $status
