#!/usr/bin/env bash
# C-STORE SCU benchmark (issue 4), not a test: 300 CT images of 512x512 16-bit (~158 MB, from
# make-qr-corpus.py --ct-bench 300) sent on ONE association, median of N runs, as JSON lines:
#
#   storescu -> storescp -od DIR      (DCMTK both ends, files written: the baseline)
#   storescu -> storescp --ignore     (DCMTK, receiver discards: the network/DIMSE ceiling)
#   px-push --backend native -> storescp -od DIR
#   px-push --backend native -> px-listen --backend native -d DIR   (the issue's goal: >= 2x the
#                                                                   baseline's MB/s; px-push's default
#                                                                   window of 16, which px-listen grants)
#   the same with px-push --window 1 (one C-STORE at a time, as with a DCMTK peer)
#
# Receivers write into WORKDIR, a fresh folder per run, all removed at the end (or moved to
# $PX_BENCH_TRASH). Every DCMTK process runs with
# TCP_NODELAY=1; px is built with `swift build -c release --static-swift-stdlib`. storescu gets
# `-R` (only the needed contexts), like px-push; both get the same 300 file paths. Then the peak RSS of px-push (native) sending ONE
# ~260 MB multi-frame file to storescp --ignore, from /usr/bin/time -v.
#
# usage: scripts/bench-push.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 7), PX_BENCH_TRASH (a folder to move the received files into),
#        PX_BENCH_RX_PARENT (where the receivers write; default WORKDIR, /dev/shm takes the disk out)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
big="$work/big-260mb.dcm"
if [ ! -f "$big" ]; then
    # One CT with 500 frames of 512x512 16-bit: 262 MB of pixel data.
    "$python" - "$ct" "$big" <<'PY'
import sys, glob, pydicom
ds = pydicom.dcmread(sorted(glob.glob(sys.argv[1] + "/*.dcm"))[0])
ds.NumberOfFrames = 500
ds.PixelData = bytes(ds.PixelData) * 500
ds.SOPInstanceUID = ds.SOPInstanceUID + ".500"
ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
ds.save_as(sys.argv[2], enforce_file_format=True)
PY
fi
(cd "$root" && swift build -c release --static-swift-stdlib --product px-push >/dev/null \
    && swift build -c release --static-swift-stdlib --product px-listen >/dev/null)
bin="$root/.build/release"

files=("$ct"/*.dcm)
bytes=$(cat "${files[@]}" | wc -c)
time_us() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "bench-push: failed (exit $?): ${*:1:4} ..." >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 ))
}
wait_echo() { for _ in $(seq 100); do echoscu -aec "$1" 127.0.0.1 "$2" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# paired KEY: the median over runs of (baseline's time / KEY's time) in the same round. The rounds are
# interleaved, and this machine has slow and fast spells that hit a whole round: a ratio within a
# round compares like with like, where the ratio of the two medians can pair a fast run with a slow one.
paired() { paste "$samples/base" "$samples/$1" | awk '{print $1 / $2}' | median; }
line() { # name median_us [baseline_us KEY]
    local mbs
    mbs=$(awk -v b="$bytes" -v u="$2" 'BEGIN { printf "%.1f", b / u }')
    if [ -n "${3:-}" ]; then
        echo "{\"run\": \"$1\", \"files\": ${#files[@]}, \"bytes\": $bytes, \"median_ms\": $(awk -v u="$2" 'BEGIN{printf "%.1f", u/1000}'), \"MB_per_s\": $mbs, \"speedup_vs_storescu_storescp\": $(awk -v a="$3" -v b="$2" 'BEGIN { printf "%.2f", a / b }'), \"median_paired_speedup\": $(paired "$4" | awk '{printf "%.2f", $1}')}"
    else
        echo "{\"run\": \"$1\", \"files\": ${#files[@]}, \"bytes\": $bytes, \"median_ms\": $(awk -v u="$2" 'BEGIN{printf "%.1f", u/1000}'), \"MB_per_s\": $mbs}"
    fi
}

pids=()
# The received files are removed at the end, or moved into $PX_BENCH_TRASH for `make bench` to remove
# after the last benchmark: on this machine's journal-less ext4, creating files within minutes of
# deleting thousands is slower (see start_receiver), which would penalise the benchmark that runs next.
recv=$(mktemp -d "${PX_BENCH_RX_PARENT:-$work}/recv.XXXXXX")
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "${PX_BENCH_TRASH:-}" ]; then mkdir -p "$PX_BENCH_TRASH" && mv "$recv" "$PX_BENCH_TRASH/"; else rm -rf "$recv"; fi
}
trap cleanup EXIT

# storescp --ignore runs throughout: it writes nothing.
ign_port=$(free_port)
storescp --ignore -aet BENCHIGN "$ign_port" >/dev/null 2>&1 &
pids+=($!)
wait_echo BENCHIGN "$ign_port"

# start_receiver KIND DIR: a receiver that writes files (storescp or px-listen) on a fresh folder; sets
# rx_pid and rx_port. Every storing run gets a folder of its own and nothing is deleted before the end:
# this machine's ext4 has no journal, and there it skips inodes freed in the last minute, looking at
# each one on every file it creates, so a run after an `rm` of the previous run's 300 files paid for
# that (up to a third of px-listen's CPU in perf), depending on which block group its folder landed in.
start_receiver() {
    mkdir -p "$2"
    rx_port=$(free_port)
    case $1 in
        storescp) storescp -od "$2" -aet BENCHSCP "$rx_port" >/dev/null 2>&1 & ;;
        px-listen) "$bin/px-listen" --backend native --port "$rx_port" --aet PXLISTEN -d "$2" >/dev/null 2>&1 & ;;
    esac
    rx_pid=$!
    pids+=($rx_pid)
    wait_echo "$([ "$1" = storescp ] && echo BENCHSCP || echo PXLISTEN)" "$rx_port" || { echo "bench-push: $1 did not start" >&2; exit 1; }
}
stop_receiver() { kill -TERM "$rx_pid" 2>/dev/null || true; wait "$rx_pid" 2>/dev/null || true; }

samples=$(mktemp -d)
# run_one KEY COMMAND...: one timed run, after sync(1) so that the write-back of the previous run's
# 158 MB does not land on this one.
run_one() {
    local key=$1; shift
    sync
    time_us "$@" >>"$samples/$key"
}

echo "== push: ${#files[@]} files, $bytes bytes, one association, median of $runs runs (interleaved)"
for run in $(seq "$runs"); do
    start_receiver storescp "$recv/base.$run"
    run_one base storescu -R -aec BENCHSCP 127.0.0.1 "$rx_port" "${files[@]}"
    stop_receiver
    run_one ign storescu -R -aec BENCHIGN 127.0.0.1 "$ign_port" "${files[@]}"
    start_receiver storescp "$recv/pxscp.$run"
    run_one pxscp "$bin/px-push" --backend native "BENCHSCP@127.0.0.1:$rx_port" "${files[@]}"
    stop_receiver
    run_one pxign "$bin/px-push" --backend native "BENCHIGN@127.0.0.1:$ign_port" "${files[@]}"
    for window in 16 1; do
        start_receiver px-listen "$recv/pxpx$window.$run"
        run_one "pxpx$window" "$bin/px-push" --backend native --window "$window" "PXLISTEN@127.0.0.1:$rx_port" "${files[@]}"
        stop_receiver
        got=$(find "$recv/pxpx$window.$run" -name '*.dcm' | { grep -v '/\.px-incoming' || true; } | wc -l)
        [ "$got" -eq "${#files[@]}" ] || { echo "bench-push: px-listen stored $got of ${#files[@]}" >&2; exit 1; }
    done
done
base=$(median <"$samples/base")
line "storescu -> storescp -od" "$base"
line "storescu -> storescp --ignore" "$(median <"$samples/ign")" "$base" ign
line "px-push native -> storescp -od" "$(median <"$samples/pxscp")" "$base" pxscp
line "px-push native -> storescp --ignore" "$(median <"$samples/pxign")" "$base" pxign
line "px-push native -> px-listen native" "$(median <"$samples/pxpx16")" "$base" pxpx16
line "px-push native --window 1 -> px-listen native" "$(median <"$samples/pxpx1")" "$base" pxpx1
# Every run's time (microseconds, in run order) on stderr: this machine has slow and fast spells.
for k in base ign pxscp pxign pxpx16 pxpx1; do echo "bench-push samples $k: $(tr "\n" " " <"$samples/$k")" >&2; done
rm -rf "$samples"

echo "== peak RSS: px-push native, one file of $(wc -c <"$big") bytes -> storescp --ignore"
rss=$( { /usr/bin/time -v "$bin/px-push" --backend native "BENCHIGN@127.0.0.1:$ign_port" "$big" >/dev/null; } 2>&1 | awk -F': ' '/Maximum resident set size/ {print $2}')
echo "{\"run\": \"px-push native big file\", \"bytes\": $(wc -c <"$big"), \"max_rss_kb\": $rss}"
