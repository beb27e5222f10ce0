#!/usr/bin/env bash
# The lasting fuzz job: builds the targets, runs each one (or those named) for SECONDS
# (default 600, ten minutes), one after another, minimises its corpus and prints, per
# target, the executions, exec/s, coverage, corpus size and findings.
#   fuzz/run.sh [SECONDS] [TARGET...]
#   nice -n 19 fuzz/run.sh            # the full job on a shared machine, 40 minutes
# Needs a nightly toolchain (`rustup toolchain install nightly`), not cargo-fuzz: it
# builds with the flags cargo-fuzz uses (so `cargo +nightly fuzz run TARGET` works on
# the same folder too) and runs libFuzzer itself.
# The corpora are fuzz/corpus/TARGET/, kept between runs outside git (ncu_parse's alone
# is about 20 MB once minimised) and minimised after each run; seed.py makes them from
# tests/fixtures, profiles/ and kernels/ when missing. Findings land in
# fuzz/artifacts/TARGET/, logs in fuzz/logs/TARGET.log, the table in fuzz/logs/summary.txt.
set -u
seconds=600
if [[ $# -ge 1 && $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
elif [[ $# -ge 1 && $1 == -* ]]; then
    echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2
    exit 2
fi
cd "$(dirname "$0")"
all=(ncu_parse manifest recipe launch_expr)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
for t in "${targets[@]}"; do
    if [[ ! " ${all[*]} " == *" $t "* ]]; then
        echo "unknown target $t (known: ${all[*]})" >&2
        exit 2
    fi
done

triple=x86_64-unknown-linux-gnu
# cargo-fuzz's own flags (`cargo fuzz build -O`, with debug assertions and overflow checks).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Zsanitizer=address \
-Cdebug-assertions -Coverflow-checks"
mkdir -p logs
echo "building the fuzz targets (nightly, address sanitizer)…"
if ! cargo +nightly build --release --target "$triple" --bins >logs/build.log 2>&1; then
    cat logs/build.log >&2
    exit 1
fi
bin=target/$triple/release

for t in "${targets[@]}"; do
    if [[ -z $(ls -A "corpus/$t" 2>/dev/null) ]]; then
        python3 seed.py
        break
    fi
done

summary=logs/summary.txt
{
    echo "fuzz run of $(date -u '+%Y-%m-%d %H:%M UTC'), ${seconds}s a target, commit $(git rev-parse --short HEAD 2>/dev/null)"
    printf '%-12s %12s %8s %7s %7s %18s %s\n' target execs exec/s cov ft corpus findings
} >"$summary"
status=0
for t in "${targets[@]}"; do
    # Large enough for the seeds (exports are cut to 64 KiB, recipes are about 16 KB),
    # small enough that the run mutates many inputs, not a few large ones.
    case $t in
        ncu_parse) max_len=65536 ;;
        manifest | recipe) max_len=16384 ;;
        *) max_len=4096 ;;
    esac
    mkdir -p "corpus/$t" "artifacts/$t"
    log=logs/$t.log
    echo "fuzzing $t for ${seconds}s (log: fuzz/$log)…"
    "$bin/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    # Minimise: keep only the inputs that add coverage.
    rm -rf "corpus/$t.min" && mkdir -p "corpus/$t.min"
    if "$bin/$t" -merge=1 -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 \
        "corpus/$t.min" "corpus/$t" >"logs/$t.merge.log" 2>&1; then
        rm -rf "corpus/$t" && mv "corpus/$t.min" "corpus/$t"
    else
        rm -rf "corpus/$t.min"
    fi
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*$')
    ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*$')
    entries=$(find "corpus/$t" -type f | wc -l)
    size=$(du -sk "corpus/$t" | cut -f1)
    found=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    printf '%-12s %12s %8s %7s %7s %18s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
        "$entries files ${size}K" "$found in fuzz/artifacts/$t (exit $rc)" | tee -a "$summary"
    [[ $rc -eq 0 && $found -eq 0 ]] || status=1
done
echo "table in fuzz/$summary"
exit $status
