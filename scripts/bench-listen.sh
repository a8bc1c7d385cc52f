#!/usr/bin/env bash
# Receiver benchmark (issue 5; issue-4 goal: px-listen native >= 1.5x storescp): storescu sends the same
# 300 x 512x512 16-bit CT instances (one association) to storescp, px-listen --backend native and
# px-listen --backend dcmtk; each run starts the receiver on a fresh folder and times storescu alone.
# Then px-listen native's peak RSS (VmHWM) while receiving ONE 1 GiB instance (goal < 100 MB).
# Release builds with --static-swift-stdlib; every process runs with TCP_NODELAY=1.
# Prints one JSON line per receiver: median seconds and instances/s, and the ratio to storescp.
#
# usage: scripts/bench-listen.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 7), PX_BENCH_LISTEN_ARGS (extra px-listen flags, e.g. --fsync),
#        PX_BENCH_SKIP_LARGE=1 to skip the 1 GiB instance, PX_BENCH_RX_PARENT (where receivers write),
#        PX_BENCH_TRASH (a folder to move the received files into instead of deleting them)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
python=${PX_VENV:-$root/.venv}/bin/python
extra=(${PX_BENCH_LISTEN_ARGS:-})
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
(cd "$root" && swift build -c release --static-swift-stdlib --product px-listen >/dev/null)
bin="$root/.build/release"

# PX_BENCH_RX_PARENT: where the receivers write (default WORKDIR; /dev/shm takes the disk out).
out=$(mktemp -d "${PX_BENCH_RX_PARENT:-$work}/listen.XXXXXX")
pid=
stop() { if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
# Removed at the end, or moved into $PX_BENCH_TRASH for `make bench` to remove after the last benchmark.
cleanup() {
    stop
    if [ -n "${PX_BENCH_TRASH:-}" ]; then mkdir -p "$PX_BENCH_TRASH" && mv "$out" "$PX_BENCH_TRASH/"; else rm -rf "$out"; fi
}
trap cleanup EXIT

# start NAME: starts the receiver NAME on a fresh folder, $out/rx.NAME.RUN; sets pid, port and rx.
# Nothing is deleted before the end: this machine's ext4 has no journal, and there it skips inodes
# freed in the last minute, looking at each one on every file it creates, so a receiver started after
# an `rm` of the previous run's 300 files paid for it (up to a third of px-listen's CPU in perf),
# depending on which block group its folder landed in.
start() {
    rx="$out/rx.$1.$run"
    mkdir -p "$rx"
    port=$(free_port)
    case $1 in
        storescp) storescp -aet PXLISTEN -od "$rx" "$port" >"$out/log" 2>&1 & ;;
        ignore) storescp -aet PXLISTEN --ignore "$port" >"$out/log" 2>&1 & ;;
        native|dcmtk) "$bin/px-listen" --backend "$1" --port "$port" --aet PXLISTEN -d "$rx" "${extra[@]}" >"$out/events" 2>"$out/log" & ;;
    esac
    pid=$!
    for _ in $(seq 100); do echoscu -aec PXLISTEN 127.0.0.1 "$port" 2>/dev/null && return 0; sleep 0.05; done
    echo "bench-listen: $1 did not start" >&2; cat "$out/log" >&2; exit 1
}

files=("$ct"/*.dcm)
count=${#files[@]}
# "ignore" is storescp --ignore, which stores nothing: the floor that storescu itself sets.
receivers=(storescp ignore native dcmtk)
# Interleaved: run i of every receiver before run i+1 of any, and sync(1) before each timed run, so
# neither machine load nor the write-back of an earlier run's 158 MB favours one receiver.
for run in $(seq "$runs"); do
    for receiver in "${receivers[@]}"; do
        start "$receiver"
        sync
        t0=$(date +%s%N)
        storescu -aec PXLISTEN 127.0.0.1 "$port" "${files[@]}" 2>>"$out/storescu.log"
        t1=$(date +%s%N)
        stop
        got=$(find "$rx" -name '*.dcm' -o -name 'CT.*' | { grep -v '/\.px-incoming' || true; } | wc -l)
        [ "$receiver" = ignore ] || [ "$got" -eq "$count" ] || { echo "bench-listen: $receiver stored $got of $count" >&2; exit 1; }
        echo $(( (t1 - t0) / 1000 )) >>"$out/times.$receiver"
    done
done
for receiver in "${receivers[@]}"; do echo "bench-listen samples $receiver: $(tr '\n' ' ' <"$out/times.$receiver")" >&2; done
base_s=$(median <"$out/times.storescp")
for receiver in "${receivers[@]}"; do
    us=$(median <"$out/times.$receiver")
    case $receiver in
        storescp) name=storescp ;;
        ignore) name="storescp --ignore (stores nothing: the sender's floor)" ;;
        *) name="px-listen --backend $receiver" ;;
    esac
    # The median over rounds of storescp's time / this receiver's time in the same round (rounds are
    # interleaved; this machine has slow and fast spells that hit a whole round).
    p=$(paste "$out/times.storescp" "$out/times.$receiver" | awk '{print $1 / $2}' | median)
    awk -v n="$name" -v u="$us" -v c="$count" -v b="$base_s" -v r="$runs" -v e="${extra[*]}" -v p="$p" 'BEGIN {
        printf "{\"receiver\": \"%s\", \"extra\": \"%s\", \"instances\": %d, \"runs\": %d, \"median_s\": %.3f, \"instances_per_s\": %.1f, \"ratio_to_storescp\": %.2f, \"median_paired_ratio\": %.2f}\n",
            n, e, c, r, u / 1e6, c / (u / 1e6), b / u, p }'
done

if [ "${PX_BENCH_SKIP_LARGE:-0}" != 1 ]; then
    large="$work/large1g"
    if [ ! -f "$large/.complete" ]; then
        rm -rf "$large" && mkdir -p "$large"
        "$python" "$root/scripts/make-listen-corpus.py" large 1024 "$large"
        touch "$large/.complete"
    fi
    run=large
    start native
    t0=$(date +%s%N)
    storescu -aec PXLISTEN 127.0.0.1 "$port" "$large/large.dcm" 2>>"$out/storescu.log"
    t1=$(date +%s%N)
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    stop
    size=$(stat -c %s "$large/large.dcm")
    awk -v k="$hwm" -v s="$size" -v u="$(( (t1 - t0) / 1000 ))" 'BEGIN {
        printf "{\"receiver\": \"px-listen --backend native\", \"instance_bytes\": %d, \"seconds\": %.2f, \"peak_rss_mb\": %.1f}\n", s, u / 1e6, k / 1024 }'
fi
