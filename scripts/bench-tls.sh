#!/usr/bin/env bash
# DICOM TLS benchmark (issue 15), not a test: the 300-CT corpus of bench-push.sh (~158 MB) sent on ONE
# association, interleaved runs, medians, as JSON lines:
#
#   px-push native -> px-listen native            plain
#   px-push native -> px-listen native            TLS (mutual, the test certificates)
#   storescu +tls  -> storescp +tls               DCMTK's TLS pair (mutual)
#
# The issue's goals: TLS costs px <= 25% of its plain throughput, and px over TLS is >= 1.5x DCMTK's
# TLS pair. Receivers write into a fresh folder per run under WORKDIR; px is built in release mode.
#
# usage: scripts/bench-tls.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 5), PX_BENCH_SKIP_BUILD=1 (use the release binaries as they are)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-5}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
if [ -z "${PX_BENCH_SKIP_BUILD:-}" ]; then
    (cd "$root" && swift build -c release --static-swift-stdlib --product px-push >/dev/null \
        && swift build -c release --static-swift-stdlib --product px-listen >/dev/null)
fi
bin="$root/.build/release"
files=("$ct"/*.dcm)
bytes=$(cat "${files[@]}" | wc -c)

recv=$(mktemp -d "$work/tls-recv.XXXXXX")
certs="$recv/certs"
bash "$root/scripts/make-test-certs.sh" "$certs"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$recv"; }
trap cleanup EXIT

px_tls=(--tls-ca "$certs/ca.pem" --tls-cert "$certs/client.pem" --tls-key "$certs/client.key")
dcmtk_tls=(+tls "$certs/client.key" "$certs/client.pem" -pw +cf "$certs/ca.pem")
wait_echo() { # AET PORT [echoscu TLS options...]
    local aet=$1 port=$2; shift 2
    for _ in $(seq 100); do echoscu -aec "$aet" "$@" 127.0.0.1 "$port" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
start_receiver() { # KIND DIR
    mkdir -p "$2"
    rx_port=$(free_port)
    case $1 in
        pxplain) "$bin/px-listen" --backend native --port "$rx_port" --aet PXLISTEN -d "$2" >/dev/null 2>&1 & ;;
        pxtls) "$bin/px-listen" --backend native --port "$rx_port" --aet PXLISTEN -d "$2" --tls-cert "$certs/server.pem" \
            --tls-key "$certs/server.key" --tls-ca "$certs/ca.pem" --tls-require-client-cert >/dev/null 2>&1 & ;;
        dcmtls) storescp -od "$2" -aet PXLISTEN +tls "$certs/server.key" "$certs/server.pem" -pw +cf "$certs/ca.pem" -rc \
            "$rx_port" >/dev/null 2>&1 & ;;
    esac
    rx_pid=$!
    pids+=($rx_pid)
    if [ "$1" = pxplain ]; then wait_echo PXLISTEN "$rx_port"; else wait_echo PXLISTEN "$rx_port" "${dcmtk_tls[@]}"; fi \
        || { echo "bench-tls: $1 did not start" >&2; exit 1; }
}
stop_receiver() { kill -TERM "$rx_pid" 2>/dev/null || true; wait "$rx_pid" 2>/dev/null || true; }
check_stored() { # DIR: every file arrived
    local got
    got=$(find "$1" -type f \( -name '*.dcm' -o -name 'CT*' \) | { grep -v '/\.px-incoming' || true; } | wc -l)
    [ "$got" -eq "${#files[@]}" ] || { echo "bench-tls: $1 holds $got of ${#files[@]} files" >&2; exit 1; }
}
samples=$(mktemp -d)
run_one() { # KEY COMMAND...
    local key=$1 t0 t1; shift
    sync
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "bench-tls: failed (exit $?): ${*:1:4} ..." >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 )) >>"$samples/$key"
}
for run in $(seq "$runs"); do
    start_receiver pxplain "$recv/pxplain.$run"
    run_one pxplain "$bin/px-push" --backend native "PXLISTEN@127.0.0.1:$rx_port" "${files[@]}"
    stop_receiver
    check_stored "$recv/pxplain.$run"
    start_receiver pxtls "$recv/pxtls.$run"
    run_one pxtls "$bin/px-push" --backend native "PXLISTEN@localhost:$rx_port" "${px_tls[@]}" "${files[@]}"
    stop_receiver
    check_stored "$recv/pxtls.$run"
    start_receiver dcmtls "$recv/dcmtls.$run"
    run_one dcmtls storescu -R "${dcmtk_tls[@]}" -aec PXLISTEN 127.0.0.1 "$rx_port" "${files[@]}"
    stop_receiver
    check_stored "$recv/dcmtls.$run"
done
for k in pxplain pxtls dcmtls; do
    m=$(median <"$samples/$k")
    echo "{\"run\": \"$k\", \"files\": ${#files[@]}, \"bytes\": $bytes, \"median_ms\": $(awk -v u="$m" 'BEGIN{printf "%.1f", u/1000}'), \"MB_per_s\": $(awk -v b="$bytes" -v u="$m" 'BEGIN { printf "%.1f", b / u }')}"
    echo "bench-tls samples $k: $(tr "\n" " " <"$samples/$k")" >&2
done
rm -rf "$samples"
