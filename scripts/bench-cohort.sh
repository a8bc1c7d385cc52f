#!/usr/bin/env bash
# bench-cohort.sh - a cohort of 200 study queries (issue 34), not a test: the 10 studies of the CT benchmark
# corpus held by dcmqrscp, asked 200 times (each StudyInstanceUID 20 times, a cohort file of 200 rows):
#
#   findscu, one run per row                  (the anchor: a script looping over a research request)
#   px-find, one run per row                  (what pypx users do today)
#   px-find --queries rows.csv                (one process, one association: --backend native)
#   px-find --queries rows.csv --parallel 4   (four associations)
#
# Median of N interleaved rounds, as JSON lines with the median time and the median of the per-round ratios
# anchor / this run. Every run is checked for its 200 matches. px is the release build's multicall binary
# (PX_BENCH_BIN: a folder with px-find; default: swift build -c release --static-swift-stdlib --product px).
# The goal: px-find --queries at least 10x findscu once per row.
#
# usage: scripts/bench-cohort.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_ROUNDS (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
rounds=${PX_BENCH_ROUNDS:-5}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/bench-common.sh"
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
[ "${#uids[@]}" -eq 10 ] || { echo "bench-cohort: expected 10 studies, found ${#uids[@]}" >&2; exit 1; }
if [ -n "${PX_BENCH_BIN:-}" ]; then
    bin=$PX_BENCH_BIN
else
    (cd "$root" && swift build -c release --static-swift-stdlib --product px >/dev/null)
    bin=$(mktemp -d)
    ln -s "$root/.build/release/px" "$bin/px-find"
fi

scratch=$(mktemp -d "$work/cohort.XXXXXX")
qr="$scratch/qr"
qr_port=$(bash "$root/scripts/dcmqrscp-start.sh" "$qr" | tail -1)
trap 'bash "$root/scripts/peer-stop.sh" "$qr/dcmqrscp.pid"; rm -rf "$scratch"' EXIT
bash "$root/scripts/dcmqrscp-load.sh" "$qr" "$studies" >/dev/null 2>&1

rows=()
for _ in $(seq 20); do rows+=("${uids[@]}"); done
{ echo StudyInstanceUID; printf '%s\n' "${rows[@]}"; } >"$scratch/rows.csv"
peer="QRSCP@127.0.0.1:$qr_port"

# Each run writes how many matches it printed to $scratch/out; run checks there are 200.
findscu_each() {
    for uid in "${rows[@]}"; do
        findscu -v -S -aec QRSCP -k QueryRetrieveLevel=STUDY -k StudyInstanceUID="$uid" -k PatientID \
            -k StudyDate -k AccessionNumber 127.0.0.1 "$qr_port" 2>&1 || return 1
    done | grep -c 'Find Response: .*(Pending)' >"$scratch/out"
}
px_each() {
    for uid in "${rows[@]}"; do
        "$bin/px-find" "$peer" --level study --StudyInstanceUID "$uid" --format ndjson --backend native || return 1
    done | grep -c '"StudyInstanceUID"' >"$scratch/out"
}
px_queries() {
    "$bin/px-find" "$peer" --queries "$scratch/rows.csv" --level study --backend native "$@" |
        grep -c '"row"' >"$scratch/out"
}
samples="$scratch/samples"
mkdir -p "$samples"
run() {
    local key=$1 t0 t1 n
    shift
    rm -f "$scratch/out"
    t0=$(date +%s%N)
    "$@" </dev/null >/dev/null 2>&1 || { echo "bench-cohort: $key failed" >&2; exit 1; }
    t1=$(date +%s%N)
    n=$(cat "$scratch/out")
    [ "$n" -eq 200 ] || { echo "bench-cohort: $key: $n matches, not 200" >&2; exit 1; }
    echo $(((t1 - t0) / 1000)) >>"$samples/$key"
}
run warmup px_queries
rm -f "$samples/warmup"
for _ in $(seq "$rounds"); do
    run findscu findscu_each
    run px_each px_each
    run px_queries px_queries
    run px_parallel px_queries --parallel 4
done
base=$(median <"$samples/findscu")
for key in findscu px_each px_queries px_parallel; do
    name=$(case $key in
        findscu) echo "findscu, one run per row" ;;
        px_each) echo "px-find, one run per row" ;;
        px_queries) echo "px-find --queries" ;;
        px_parallel) echo "px-find --queries --parallel 4" ;;
    esac)
    med=$(median <"$samples/$key")
    paired=$(paste "$samples/findscu" "$samples/$key" | awk '{print $1 / $2}' | median)
    printf '{"run": "%s", "rows": 200, "rounds": %d, "median_ms": %.1f, "speedup_vs_findscu_per_row": %.2f, "median_paired_speedup": %.2f}\n' \
        "$name" "$rounds" "$(awk -v u="$med" 'BEGIN{print u/1000}')" "$(awk -v a="$base" -v b="$med" 'BEGIN{print a/b}')" "$paired"
done
