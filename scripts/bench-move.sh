#!/usr/bin/env bash
# C-MOVE SCU benchmark (issue 12), not a test: 10 studies x 30 CT images of 512x512 16-bit (the 300 of
# make-qr-corpus.py --ct-bench 300, regrouped into 10 studies of one series each) held by dcmqrscp, all
# moved into storescp -od DIR, median of N interleaved rounds, as JSON lines:
#
#   movescu, one run per study                (10 associations: the baseline, as a script loops)
#   movescu, the 10 queries in one run        (movescu sends every query file on one association)
#   px-move --backend dcmtk  (10 --StudyInstanceUID: one movescu run per study)
#   px-move --backend native (10 --StudyInstanceUID: one association, the RetrieveSession)
#
# Each line has the median time and the median of the per-round ratios baseline / this run (rounds are
# interleaved, so a slow spell of the machine hits a whole round). Every process runs with TCP_NODELAY=1;
# px is built with `swift build -c release --static-swift-stdlib`. storescp writes into a fresh folder per
# run (removed outside the timing). The goal: px-move (native) >= 1.2x the baseline.
#
# usage: scripts/bench-move.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 7)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
# The 300 images regrouped into 10 studies of 30 (StudyInstanceUID / SeriesInstanceUID per group).
studies=$(bench_ct10x30 "$work")
mapfile -t uids < <("$python" - "$studies" <<'PY'
import sys, glob, pydicom
seen = []
for path in sorted(glob.glob(sys.argv[1] + "/*.dcm")):
    uid = str(pydicom.dcmread(path, stop_before_pixels=True).StudyInstanceUID)
    if uid not in seen:
        seen.append(uid)
print("\n".join(seen))
PY
)
[ "${#uids[@]}" -eq 10 ] || { echo "bench-move: expected 10 studies, found ${#uids[@]}" >&2; exit 1; }

(cd "$root" && swift build -c release --static-swift-stdlib --product px-move >/dev/null)
bin="$root/.build/release"

# --- peers: storescp (the move destination) and dcmqrscp holding the 10 studies
scratch=$(mktemp -d "$work/move.XXXXXX")
store_port=$(free_port)
storescp --aetitle STORESCP -od "$scratch/recv" "$store_port" >"$scratch/storescp.log" 2>&1 &
store_pid=$!
mkdir -p "$scratch/recv"
qr="$scratch/qr"
qr_port=$(PX_QR_DESTS="STORESCP=127.0.0.1:$store_port" bash "$root/scripts/dcmqrscp-start.sh" "$qr" | tail -1)
trap 'kill "$store_pid" 2>/dev/null || true; bash "$root/scripts/peer-stop.sh" "$qr/dcmqrscp.pid"; rm -rf "$scratch"' EXIT
bash "$root/scripts/dcmqrscp-load.sh" "$qr" "$studies" >/dev/null 2>&1
for _ in $(seq 100); do echoscu -aec STORESCP 127.0.0.1 "$store_port" 2>/dev/null && break; sleep 0.1; done

# One query file per study, for movescu's one-association run.
queries=()
for i in "${!uids[@]}"; do
    printf '(0008,0052) CS [STUDY]\n(0020,000d) UI [%s]\n' "${uids[$i]}" | dump2dcm /dev/stdin "$scratch/q$i.dcm"
    queries+=("$scratch/q$i.dcm")
done

movescu_each() {
    for uid in "${uids[@]}"; do
        movescu -S -aec QRSCP -aem STORESCP -k QueryRetrieveLevel=STUDY -k StudyInstanceUID="$uid" 127.0.0.1 "$qr_port" || return 1
    done
}
movescu_one() { movescu -S -aec QRSCP -aem STORESCP 127.0.0.1 "$qr_port" "${queries[@]}"; }
px_move() {
    local args=()
    for uid in "${uids[@]}"; do args+=(--StudyInstanceUID "$uid"); done
    "$bin/px-move" "QRSCP@127.0.0.1:$qr_port" --destination STORESCP "${args[@]}" --backend "$1"
}
# time_us KEY COMMAND...: runs it, checks 300 files arrived, appends microseconds to samples/KEY.
samples="$scratch/samples"
mkdir -p "$samples"
time_us() {
    local key=$1 t0 t1 n
    shift
    rm -rf "$scratch/recv" && mkdir -p "$scratch/recv"
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "bench-move: $key failed (exit $?)" >&2; exit 1; }
    t1=$(date +%s%N)
    n=$(find "$scratch/recv" -type f | wc -l)
    [ "$n" -eq 300 ] || { echo "bench-move: $key: $n files arrived, not 300" >&2; exit 1; }
    echo $(((t1 - t0) / 1000)) >>"$samples/$key"
}

time_us warmup px_move native
rm -f "$samples/warmup"
for _ in $(seq "$runs"); do
    time_us base movescu_each
    time_us movescu_one movescu_one
    time_us px_dcmtk px_move dcmtk
    time_us px_native px_move native
done

base=$(median <"$samples/base")
for key in base movescu_one px_dcmtk px_native; do
    name=$(case $key in
        base) echo "movescu, one run per study" ;;
        movescu_one) echo "movescu, 10 queries on one association" ;;
        px_dcmtk) echo "px-move --backend dcmtk" ;;
        px_native) echo "px-move --backend native" ;;
    esac)
    med=$(median <"$samples/$key")
    paired=$(paste "$samples/base" "$samples/$key" | awk '{print $1 / $2}' | median)
    printf '{"run": "%s", "studies": 10, "instances": 300, "rounds": %d, "median_ms": %.1f, "speedup_vs_movescu_per_study": %.2f, "median_paired_speedup": %.2f}\n' \
        "$name" "$runs" "$(awk -v u="$med" 'BEGIN{print u/1000}')" "$(awk -v a="$base" -v b="$med" 'BEGIN{print a/b}')" "$paired"
done
