#!/usr/bin/env bash
# px's libFuzzer targets (Fuzz/, issue 14): build, run for a bounded time, rebuild the seed corpus.
#
#   scripts/fuzz.sh build                      build every fuzzer (release, libFuzzer + AddressSanitizer)
#   scripts/fuzz.sh run SECONDS [TARGET...]    run each target (default: all) for SECONDS
#   scripts/fuzz.sh seed                       regenerate the seeds and minimise them into Fuzz/Corpus
#
# A run starts from the committed corpus Fuzz/Corpus/TARGET and writes what it discovers to
# $FUZZ_WORK/TARGET/corpus (default Fuzz/.build/fuzz-work), never into the committed corpus. A crash,
# a failed invariant, a timeout (> 10 s for one input) or an allocation above 256 MB leaves its input
# in $FUZZ_WORK/TARGET/ (crash-*, timeout-*, oom-*) and makes the run fail once every target has run.
# Reproduce one with: Fuzz/.build/release/fuzz-TARGET FILE
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(pdu dataset json layout zip web)
BIN=Fuzz/.build/release
WORK=${FUZZ_WORK:-Fuzz/.build/fuzz-work}
SWIFT=${SWIFT:-swift}
# --sanitize fuzzer makes SwiftPM link libFuzzer's main and compile the executables as libraries;
# the -Xswiftc flag instruments every Swift module for coverage and AddressSanitizer (SwiftPM 6.3 passes
# only one of several --sanitize values to the compiler). Release: a debug build ran 4 to 50 inputs/s.
BUILD=("$SWIFT" build --package-path Fuzz -c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address)
# The Swift runtime's backtracer would catch the fatal errors of failed invariants before libFuzzer does.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
FLAGS=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1)

build() {
    "${BUILD[@]}"
}

run() {
    local seconds=$1
    shift
    local targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
    local failed=()
    for target in "${targets[@]}"; do
        mkdir -p "$WORK/$target/corpus"
        echo "fuzz-$target: ${seconds} s" >&2
        if ! "$BIN/fuzz-$target" "${FLAGS[@]}" -max_total_time="$seconds" -artifact_prefix="$WORK/$target/" \
            "$WORK/$target/corpus" "Fuzz/Corpus/$target" 2> "$WORK/$target/log"; then
            failed+=("$target")
            grep -E "fuzz invariant|ERROR|SUMMARY|Test unit written" "$WORK/$target/log" >&2 || true
        fi
        grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|DONE" "$WORK/$target/log" >&2 || true
    done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "fuzz: failures in ${failed[*]} (inputs and logs in $WORK)" >&2
        return 1
    fi
}

seed() {
    local raw
    raw=$(mktemp -d)
    trap 'rm -rf "$raw"' RETURN
    PYTHON=${PYTHON:-.venv/bin/python}
    "$PYTHON" scripts/fuzz-seeds.py "$raw"
    for target in "${ALL_TARGETS[@]}"; do
        rm -rf "Fuzz/Corpus/$target"
        mkdir -p "Fuzz/Corpus/$target" "$raw/$target"
        "$BIN/fuzz-$target" "${FLAGS[@]}" -merge=1 "Fuzz/Corpus/$target" "$raw/$target" 2> "$raw/$target.log" \
            || { tail -20 "$raw/$target.log" >&2; return 1; }
        echo "fuzz-$target: $(ls "Fuzz/Corpus/$target" | wc -l) seeds, $(du -sh "Fuzz/Corpus/$target" | cut -f1)" >&2
    done
}

case "${1:-}" in
    build) build ;;
    run) shift; run "$@" ;;
    seed) seed ;;
    *) sed -n '2,13p' "$0" >&2; exit 64 ;;
esac
