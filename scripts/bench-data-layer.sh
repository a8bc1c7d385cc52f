#!/usr/bin/env bash
# Data-layer benchmark (issue 2): parse throughput and header-only read of 300 files of
# 512x512 16-bit CT, next to DCMTK's dcmdump on the same files.
#
# usage: scripts/bench-data-layer.sh [WORKDIR]   (default: bench-data/ in the project)
# Needs: the test venv (scripts/setup-test-env.sh), DCMTK, a release build (built here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-11}
python=${PX_VENV:-$root/.venv}/bin/python
. "$root/scripts/bench-common.sh"
mkdir -p "$work"
ct=$(bench_ct300 "$work")
(cd "$root" && swift build -c release --static-swift-stdlib --product px-bench >/dev/null && swift build -c release --static-swift-stdlib --product px-dump >/dev/null)
bench="$root/.build/release/px-bench"

echo "== px (one process, median of $runs runs)"
"$bench" "$ct" "$runs"

files=("$ct"/*.dcm)
time_ms() { # command... -> wall time in ms
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
echo "== dcmdump and px-dump --format text, a process each for all ${#files[@]} files (median of $runs interleaved runs)"
pxdump="$root/.build/release/px-dump"
samples=$(mktemp -d)
for _ in $(seq "$runs"); do
    time_ms dcmdump -q "${files[@]}" >>"$samples/full"
    time_ms dcmdump -q +sb 7fe0,0010 "${files[@]}" >>"$samples/header"
    time_ms "$pxdump" -f text "${files[@]}" >>"$samples/pfull"
    time_ms "$pxdump" -f text --header-only "${files[@]}" >>"$samples/pheader"
done
full=$(median <"$samples/full")
header=$(median <"$samples/header")
pfull=$(median <"$samples/pfull")
pheader=$(median <"$samples/pheader")
rm -rf "$samples"
bytes=$(du -cb "${files[@]}" | tail -1 | cut -f1)
echo "{\"px_dump_text_full_ms\": $pfull, \"px_dump_text_header_only_ms\": $pheader}"
echo "{\"files\": ${#files[@]}, \"bytes\": $bytes, \"dcmdump_full_ms\": $full, \"dcmdump_full_MBps\": $(( bytes / (full * 1000) )), \"dcmdump_stop_before_pixeldata_ms\": $header}"
