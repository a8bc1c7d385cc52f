#!/usr/bin/env bash
# bench-before-after.sh - the same commands from two builds of px, side by side in one run: a change
# that reshapes code (issue 16) must not make px slower. For each case the two builds run alternately
# (round by round, so a slow spell of the machine hits both alike) and the medians and the ratio
# new/base are printed as JSON lines (a ratio below 1 means the new build is faster).
#
# Cases: px-echo to storescp (native and dcmtk backends); px-find at image level, 300 records, from
# dcmqrscp (native and dcmtk); px-push of 300 CT files (about 158 MB) to storescp --ignore (native).
#
# usage: scripts/bench-before-after.sh BASE_BIN NEW_BIN [WORKDIR]
#   BASE_BIN, NEW_BIN: folders holding px-echo, px-find and px-push (release builds, e.g. made with
#   `swift build -c release --static-swift-stdlib` in two checkouts)
# env:   PX_BENCH_RUNS (default 21; push uses a third of it, at least 5)
set -euo pipefail
if [[ $# -lt 2 || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
base=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
work=${3:-$root/bench-data}
runs=${PX_BENCH_RUNS:-21}
push_runs=$(( runs / 3 < 5 ? 5 : runs / 3 ))
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C
for b in "$base" "$new"; do
    for tool in px-echo px-find px-push; do
        [ -x "$b/$tool" ] || { echo "bench-before-after.sh: $b/$tool missing" >&2; exit 1; }
    done
done

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
files=("$ct"/*.dcm)

scp_port=$(free_port)
ign_port=$(free_port)
tmp=$(mktemp -d)
setsid storescp --ignore -aet BENCHSCP "$scp_port" >>"$tmp/storescp.log" 2>&1 &
echo $! >"$tmp/storescp.pid"
setsid storescp --ignore -aet BENCHIGN "$ign_port" >>"$tmp/storescp-ign.log" 2>&1 &
echo $! >"$tmp/storescp-ign.pid"
qr="$work/qr-before-after"
rm -rf "$qr" && mkdir -p "$qr"
qr_port=$(bash "$root/scripts/dcmqrscp-start.sh" "$qr" | tail -1)
cleanup() {
    bash "$root/scripts/peer-stop.sh" "$tmp/storescp.pid"
    bash "$root/scripts/peer-stop.sh" "$tmp/storescp-ign.pid"
    bash "$root/scripts/peer-stop.sh" "$qr/dcmqrscp.pid"
    rm -rf "$tmp" "$qr"
}
trap cleanup EXIT
bash "$root/scripts/dcmqrscp-load.sh" "$qr" "$ct" >/dev/null
for port in "$scp_port" "$ign_port"; do
    for _ in $(seq 50); do echoscu 127.0.0.1 "$port" 2>/dev/null && break; sleep 0.1; done
done
read -r study series < <("$python" - "$ct" <<'PY'
import sys, glob, pydicom
ds = pydicom.dcmread(sorted(glob.glob(sys.argv[1] + "/*.dcm"))[0], stop_before_pixels=True)
print(ds.StudyInstanceUID, ds.SeriesInstanceUID)
PY
)

# compare NAME RUNS ARGS...: runs `BIN/ARGS...` for both builds alternately; ARGS[0] is the tool name.
compare() {
    local name=$1 n=$2
    shift 2
    local samples
    samples=$(mktemp -d)
    for _ in $(seq "$n"); do
        time_us "$base/$1" "${@:2}" >>"$samples/base"
        time_us "$new/$1" "${@:2}" >>"$samples/new"
    done
    local b n_
    b=$(median <"$samples/base")
    n_=$(median <"$samples/new")
    echo "{\"case\": \"$name\", \"runs\": $n, \"base_median_ms\": $(ms "$b"), \"new_median_ms\": $(ms "$n_"), \"new_over_base\": $(ratio "$n_" "$b")}"
    rm -rf "$samples"
}

for backend in native dcmtk; do
    compare "px-echo --backend $backend" "$runs" px-echo --backend "$backend" --aec BENCHSCP "127.0.0.1:$scp_port"
done
for backend in native dcmtk; do
    compare "px-find --backend $backend (image level, 300 records)" "$runs" px-find --backend "$backend" --aec QRSCP \
        --level image -k "StudyInstanceUID=$study" -k "SeriesInstanceUID=$series" \
        --QueryReturnTags SOPInstanceUID,InstanceNumber --format ndjson "127.0.0.1:$qr_port"
done
compare "px-push --backend native (300 CT files)" "$push_runs" px-push --backend native \
    "BENCHIGN@127.0.0.1:$ign_port" "${files[@]}"
