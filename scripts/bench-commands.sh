#!/usr/bin/env bash
# Command benchmarks (issues 3 and 4): px-echo against bare echoscu (a process per echo), and
# px-find at image level returning 300 records against bare `findscu -X`. Every DCMTK process,
# peers included, runs with TCP_NODELAY=1. Prints medians and ratios as JSON lines, after the installed
# prefix's size and the --help start-up of px-echo and px-find beside echoscu's.
#
# usage: scripts/bench-commands.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 31), PX_BENCH_BACKENDS (default "dcmtk", e.g. "dcmtk native")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-31}
backends=${PX_BENCH_BACKENDS:-dcmtk}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
# What `make install` installs (the multi-call px, stripped, and px-echo ... as links to it) is what is measured.
prefix="$work/prefix"
rm -rf "$prefix"
make -C "$root" install PREFIX="$prefix" >/dev/null
bin="$prefix/bin"

echo "== size and start-up: the installed prefix; --help, median of $runs runs (interleaved)"
echo "{\"installed_bytes\": $(du -sb "$prefix" | cut -f1), \"px_bytes\": $(stat -c %s "$bin/px")}"
samples=$(mktemp -d)
for _ in $(seq "$runs"); do
    time_us echoscu --help >>"$samples/echoscu"
    time_us "$bin/px-echo" --help >>"$samples/px-echo"
    time_us "$bin/px-find" --help >>"$samples/px-find"
done
for tool in echoscu px-echo px-find; do
    echo "{\"tool\": \"$tool --help\", \"median_ms\": $(ms "$(median <"$samples/$tool")")}"
done
rm -rf "$samples"


# --- peers: storescp for echo, dcmqrscp holding the 300 CT images for find
scp_port=$(free_port)
scp_dir=$(mktemp -d)
setsid storescp --ignore -aet BENCHSCP "$scp_port" >>"$scp_dir/storescp.log" 2>&1 &
echo $! >"$scp_dir/storescp.pid"
# A second storescp as DCMTK ships it: Nagle on, so each answer's PDU body waits for the ACK of its header.
plain_port=$(free_port)
env -u TCP_NODELAY setsid storescp --ignore -aet BENCHSCP "$plain_port" >>"$scp_dir/storescp-plain.log" 2>&1 &
echo $! >"$scp_dir/storescp-plain.pid"
qr="$work/qr"
rm -rf "$qr" && mkdir -p "$qr"
qr_port=$(bash "$root/scripts/dcmqrscp-start.sh" "$qr" | tail -1)
trap 'bash "$root/scripts/peer-stop.sh" "$scp_dir/storescp.pid"; bash "$root/scripts/peer-stop.sh" "$scp_dir/storescp-plain.pid"; bash "$root/scripts/peer-stop.sh" "$qr/dcmqrscp.pid"; rm -rf "$scp_dir"' EXIT
bash "$root/scripts/dcmqrscp-load.sh" "$qr" "$ct" >/dev/null
for _ in $(seq 50); do echoscu -aec BENCHSCP 127.0.0.1 "$scp_port" 2>/dev/null && break; sleep 0.1; done

read -r study series < <("$python" - "$ct" <<'PY'
import sys, glob, pydicom
ds = pydicom.dcmread(sorted(glob.glob(sys.argv[1] + "/*.dcm"))[0], stop_before_pixels=True)
print(ds.StudyInstanceUID, ds.SeriesInstanceUID)
PY
)

# echo_rows PORT LABEL [ENV-ARGUMENT...]: echoscu and px-echo (each backend) against PORT, interleaved $runs
# times, run through `env ENV-ARGUMENT...` when given; prints their medians, LABEL after each tool's name, and
# px's ratio to echoscu.
echo_rows() {
    local port=$1 label=$2 samples backend echoscu_us px_us
    shift 2
    local run=()
    [ $# -gt 0 ] && run=(env "$@")
    samples=$(mktemp -d)
    for _ in $(seq "$runs"); do
        time_us "${run[@]}" echoscu -aec BENCHSCP 127.0.0.1 "$port" >>"$samples/echoscu"
        for backend in $backends; do
            time_us "${run[@]}" "$bin/px-echo" --backend "$backend" --aec BENCHSCP "127.0.0.1:$port" \
                >>"$samples/$backend"
        done
    done
    echoscu_us=$(median <"$samples/echoscu")
    echo "{\"tool\": \"echoscu$label\", \"median_ms\": $(ms "$echoscu_us")}"
    for backend in $backends; do
        px_us=$(median <"$samples/$backend")
        echo "{\"tool\": \"px-echo --backend $backend$label\", \"median_ms\": $(ms "$px_us"), \"ratio_to_echoscu\": $(ratio "$px_us" "$echoscu_us")}"
    done
    rm -rf "$samples"
}

echo "== echo: a process per association, median of $runs runs (interleaved, so load hits all alike)"
echo_rows "$scp_port" ""

echo "== echo against the storescp without TCP_NODELAY (echoscu without it too, as a user runs it), median of $runs runs"
for _ in $(seq 50); do echoscu -aec BENCHSCP 127.0.0.1 "$plain_port" 2>/dev/null && break; sleep 0.1; done
echo_rows "$plain_port" " (peer without TCP_NODELAY)" -u TCP_NODELAY

# findscu -X writes into the same kind of folder px-find's DCMTK backend uses (tmpfs when /dev/shm is
# there), so the comparison is of the tools, not of the file systems.
shm=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && shm=/dev/shm
echo "== find: image level, 300 records, median of $runs runs (interleaved; findscu -X writes under $shm)"
out=$(mktemp -d "$shm/bench-findscu.XXXXXX")
# The same identifier for both: dcmqrscp needs the StudyInstanceUID above an IMAGE-level query.
find_args=(-S -k QueryRetrieveLevel=IMAGE -k "StudyInstanceUID=$study" -k "SeriesInstanceUID=$series" -k SOPInstanceUID -k InstanceNumber -aec QRSCP 127.0.0.1 "$qr_port")
px_find_args=(--aec QRSCP --level image -k "StudyInstanceUID=$study" -k "SeriesInstanceUID=$series" --QueryReturnTags SOPInstanceUID,InstanceNumber --format ndjson "127.0.0.1:$qr_port")
count=$(findscu -X -od "$out" "${find_args[@]}" 2>/dev/null; ls "$out" | wc -l)
samples=$(mktemp -d)
for _ in $(seq "$runs"); do
    rm -rf "$out" && mkdir "$out"
    time_us findscu -X -od "$out" "${find_args[@]}" >>"$samples/findscu"
    for backend in $backends; do
        time_us "$bin/px-find" --backend "$backend" "${px_find_args[@]}" >>"$samples/$backend"
    done
done
findscu_us=$(median <"$samples/findscu")
echo "{\"tool\": \"findscu -X\", \"records\": $count, \"median_ms\": $(awk -v u="$findscu_us" 'BEGIN{printf "%.2f", u/1000}')}"
for backend in $backends; do
    records=$(( $("$bin/px-find" --backend "$backend" "${px_find_args[@]}" | wc -l) - 1 ))
    px_us=$(median <"$samples/$backend")
    echo "{\"tool\": \"px-find --backend $backend\", \"records\": $records, \"median_ms\": $(awk -v u="$px_us" 'BEGIN{printf "%.2f", u/1000}'), \"ratio_to_findscu\": $(ratio "$px_us" "$findscu_us")}"
done
rm -rf "$samples"
rm -rf "$out"

# What the peer and the protocol take, without a process: px's own client library in one process
# (px-net-bench), one association after another, against the same peers. The rest of each tool's time above is
# its process: start-up, command line, output.
echo "== in one process (px-net-bench: no start-up, command line or output), median of $runs associations"
(cd "$root" && swift build -c release --static-swift-stdlib --product px-net-bench >/dev/null)
net_bench=$(cd "$root" && swift build -c release --static-swift-stdlib --show-bin-path)/px-net-bench
echo_ms=$("$net_bench" echo "$runs" 127.0.0.1 "$scp_port" BENCHSCP | sed -n 's/.*median_ms=//p')
echo "{\"tool\": \"C-ECHO association in process\", \"median_ms\": $(printf '%.2f' "$echo_ms")}"
find_line=$("$net_bench" find "$runs" 127.0.0.1 "$qr_port" QRSCP "$study" "$series")
find_ms=$(echo "$find_line" | sed -n 's/.*median_ms=//p')
echo "{\"tool\": \"C-FIND association in process\", \"records\": $(echo "$find_line" | sed -n 's/.*matches=\([0-9]*\).*/\1/p'), \"median_ms\": $(printf '%.2f' "$find_ms")}"
