#!/usr/bin/env bash
# bench-check.sh - the benchmark gate (issue 34; `make bench-check`, .ci/run runs it): a fast subset of the
# benchmarks, px side by side with its anchor in the same run, interleaved rounds, medians.
#
# Speed cases: each prints px's median, the anchor's median and the speed ratio anchor time / px time
# (above 1: px is faster; the median over the rounds of each round's ratio, the two runs back to back), against the budget committed in docs/benchmarks.rst ("Benchmark gate", the block
# between the "bench-check budgets" markers: the one source of the budgets). A case fails when its ratio is
# more than 25% below its budget (ratio < 0.75 x budget) in two measurements in a row: a failing case is
# measured once more before the gate fails, so one slow spell of a shared machine does not fail CI.
#   echo     px-echo --backend native        vs echoscu                     (C-ECHO, a process each)
#   find     px-find --backend native        vs findscu -X                  (image level, SMALL records)
#   web-curl px-get URL (WADO-RS)            vs curl --parallel, a request per series
#   web-dwc  px-get URL (WADO-RS)            vs dicomweb-client 0.61 iter_study
#   sync     px-sync PEER DIR (native C-GET) vs movescu into storescp -od
#   zip      px-sync PEER zip:DIR            vs px-sync PEER DIR (the zip place against the folder place)
#   receive  storescu -> px-listen native    vs storescu -> storescp --ignore (stores nothing)
# Memory cases, deterministic: peak RSS of the same paths, and px-push native -> storescp, at SMALL and LARGE
# instances (a run each; getrusage of the child, VmHWM for px-listen); a path fails when
# RSS(LARGE) > 1.25 x RSS(SMALL) + 3 MiB, again when measured once more.
#
# usage: scripts/bench-check.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_BIN   the px to check: a multi-call px binary, or a folder holding one (e.g. PREFIX/bin of
#                       `make install`); default: `make release` here, then .build/release/px
#        PX_BENCH_RUNS  interleaved rounds per speed case (default 7)
#        PX_BENCH_PARTS "speed memory" (default), or one of them, for a look at one part
#        PX_VENV (test venv: pydicom), PX_BENCH_VENV (dicomweb-client, scripts/setup-bench-env.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
parts=${PX_BENCH_PARTS:-speed memory}
small=60
large=240
python=${PX_VENV:-$root/.venv}/bin/python
bench_venv=${PX_BENCH_VENV:-$root/.bench-venv}
export TCP_NODELAY=1 LC_ALL=C
started=$SECONDS

mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/lib.sh"
. "$root/scripts/bench-common.sh"

# --- the budgets: "CASE BUDGET ..." rows between the markers in docs/benchmarks.rst
docs="$root/docs/benchmarks.rst"
declare -A budget
while read -r name value; do budget[$name]=$value; done < <(awk '
    /^\.\. bench-check budgets: begin/ { on = 1; next }
    /^\.\. bench-check budgets: end/ { on = 0 }
    on && $1 ~ /^[a-z][a-z-]*$/ && $2 ~ /^[0-9.]+$/ { print $1, $2 }' "$docs")
for name in echo find web-curl web-dwc sync zip receive; do
    [ -n "${budget[$name]:-}" ] || { echo "bench-check: no budget for $name in $docs" >&2; exit 1; }
done

# --- the px checked: a folder of px-* links to it (the multi-call binary dispatches on its name)
px=${PX_BENCH_BIN:-}
if [ -z "$px" ]; then
    make -C "$root" release >&2
    px="$root/.build/release/px"
fi
[ -d "$px" ] && px="$px/px"
[ -x "$px" ] || { echo "bench-check: $px is not an executable" >&2; exit 1; }
px=$(cd "$(dirname "$px")" && pwd)/$(basename "$px")
bin="$work/check-bin"
rm -rf "$bin" && mkdir -p "$bin"
for tool in px-echo px-find px-get px-sync px-push px-listen; do ln -s "$px" "$bin/$tool"; done
PX_BENCH_VENV=$bench_venv bash "$root/scripts/setup-bench-env.sh" >&2
echo "bench-check: $px ($("$bin/px-echo" --version)); $runs rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- corpus and peers: Orthanc (DICOMweb plugin, knows storescp as STORESCP) holds the web sets, dcmqrscp the
# find sets; storescp -od for movescu
sets=$(bench_ct_sets "$work" "$small" "$large" 4)
tmp="$work/check"
rm -rf "$tmp" && mkdir -p "$tmp"
listener=
cleanup() {
    [ -z "$listener" ] || { kill -TERM "$listener" 2>/dev/null; wait "$listener" 2>/dev/null; } || true
    for pidfile in "$tmp/orthanc/orthanc.pid" "$tmp/qr/dcmqrscp.pid" "$tmp/storescp.pid"; do
        [ ! -s "$pidfile" ] || bash "$root/scripts/peer-stop.sh" "$pidfile" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
scp_port=$(free_port)
mkdir -p "$tmp/scp-in"
setsid storescp -aet STORESCP -od "$tmp/scp-in" "$scp_port" >"$tmp/storescp.log" 2>&1 &
echo $! >"$tmp/storescp.pid"
read -r dicom_port http_port < <(PX_ORTHANC_DICOMWEB=1 PX_ORTHANC_MODALITIES="storescp=STORESCP@127.0.0.1:$scp_port" \
    bash "$root/scripts/orthanc-start.sh" "$tmp/orthanc" | tail -1)
qr_port=$(bash "$root/scripts/dcmqrscp-start.sh" "$tmp/qr" | tail -1)
wait_echo STORESCP "$scp_port" "$(cat "$tmp/storescp.pid")" || { echo "bench-check: storescp did not start" >&2; exit 1; }
for n in $small $large; do
    storescu -aec ORTHANC 127.0.0.1 "$dicom_port" +sd "$sets/web-$n" >/dev/null 2>&1
    bash "$root/scripts/dcmqrscp-load.sh" "$tmp/qr" "$sets/find-$n" >/dev/null
done
url="http://127.0.0.1:$http_port/dicom-web"
peer="ORTHANC@127.0.0.1:$dicom_port"
echo "bench-check: peers up, $small and $large CT instances loaded ($((SECONDS - started)) s)"

# count FOLDER PATTERN: the files under FOLDER named PATTERN.
count() { find "$1" -name "$2" -type f | wc -l; }
# expect WHAT GOT WANTED: ends the script unless GOT = WANTED.
expect() { [ "$2" = "$3" ] || { echo "bench-check: $1: $2, not $3" >&2; exit 1; }; }

# --- one run of each side of each case, at N instances: prints its wall time in microseconds. Any output
# folder is made fresh before the clock starts.
study() { cat "$sets/$1-$2.study"; }
run_px_echo() { time_us_checked "$bin/px-echo" --backend native --aec STORESCP "127.0.0.1:$scp_port"; }
run_echoscu() { time_us_checked echoscu -aec STORESCP 127.0.0.1 "$scp_port"; }
find_keys() { echo "StudyInstanceUID=$(study find "$1")" "SeriesInstanceUID=$(cat "$sets/find-$1.series")"; }
run_px_find() {
    local k=() key
    for key in $(find_keys "$1"); do k+=(-k "$key"); done
    time_us_checked "$bin/px-find" --backend native --aec QRSCP --level image "${k[@]}" \
        --QueryReturnTags SOPInstanceUID,InstanceNumber --format ndjson "127.0.0.1:$qr_port"
    expect "px-find records" "$(($(wc -l <"$work/last-run.out") - 1))" "$1"
}
run_findscu() {
    local k=() key
    for key in $(find_keys "$1"); do k+=(-k "$key"); done
    rm -rf "$tmp/findscu" && mkdir -p "$tmp/findscu"
    time_us_checked findscu -X -od "$tmp/findscu" -S -k QueryRetrieveLevel=IMAGE "${k[@]}" -k SOPInstanceUID \
        -k InstanceNumber -aec QRSCP 127.0.0.1 "$qr_port"
    expect "findscu records" "$(count "$tmp/findscu" '*')" "$1"
}
run_px_get() {
    rm -rf "$tmp/get"
    time_us_checked "$bin/px-get" "$url" --StudyInstanceUID "$(study web "$1")" -d "$tmp/get"
    expect "px-get instances" "$(count "$tmp/get" '*.dcm')" "$1"
}
run_curl() {
    local s st
    st=$(study web "$1")
    rm -rf "$tmp/curl" && mkdir -p "$tmp/curl"
    while read -r s; do
        printf 'url = "%s/studies/%s/series/%s"\noutput = "%s/%s.multipart"\n' "$url" "$st" "$s" "$tmp/curl" "$s"
    done <"$sets/web-$1.series" >"$tmp/curl.config"
    time_us_checked curl -sS --fail --parallel --parallel-max 4 \
        -H 'Accept: multipart/related; type="application/dicom"' -K "$tmp/curl.config"
    expect "curl parts" "$(cat "$tmp/curl"/*.multipart | grep -a -c -i '^content-type: application/dicom')" "$1"
}
run_dwc() {
    rm -rf "$tmp/dwc"
    time_us_checked "$bench_venv/bin/python" "$root/scripts/bench-web-clients.py" dicomweb-client "$url" "$tmp/dwc" \
        "$(study web "$1")"
    expect "dicomweb-client instances" "$(count "$tmp/dwc" '*.dcm')" "$1"
}
run_px_sync() {
    rm -rf "$tmp/sync"
    time_us_checked "$bin/px-sync" --backend native "$peer" "$tmp/sync" --StudyInstanceUID "$(study web "$1")"
    expect "px-sync instances" "$(count "$tmp/sync" '*.dcm')" "$1"
}
run_px_sync_zip() {
    rm -rf "$tmp/zip"
    time_us_checked "$bin/px-sync" --backend native "$peer" "zip:$tmp/zip" --StudyInstanceUID "$(study web "$1")"
    expect "px-sync zips" "$(count "$tmp/zip" '*.zip')" 1
}
run_movescu() {
    rm -rf "$tmp/scp-in" && mkdir -p "$tmp/scp-in"
    time_us_checked movescu -S -aec ORTHANC -aem STORESCP -k QueryRetrieveLevel=STUDY \
        -k "StudyInstanceUID=$(study web "$1")" 127.0.0.1 "$dicom_port"
    expect "movescu instances" "$(count "$tmp/scp-in" '*')" "$1"
}
# receive_with RECEIVER N: starts RECEIVER (px-listen, or storescp --ignore) on a fresh folder, times storescu
# sending the N instances to it (one association), stops it; prints the time (and sets hwm_kib, the receiver's
# VmHWM).
receive_with() {
    local port us rx="$tmp/rx"
    rm -rf "$rx" "$tmp/events" && mkdir -p "$rx"
    case $1 in
    px-listen)
        "$bin/px-listen" --backend native --port 0 --aet PXLISTEN -d "$rx" >"$tmp/events" 2>"$tmp/listen.log" &
        listener=$!
        px_wait_for "$listener" 100 grep -qs '"event":"listening"' "$tmp/events" ||
            { echo "bench-check: px-listen did not start" >&2; cat "$tmp/listen.log" >&2; exit 1; }
        port=$(sed -n 's/.*"event":"listening".*"port":\([0-9]*\).*/\1/p' "$tmp/events" | head -1)
        ;;
    storescp)
        port=$(free_port)
        storescp -aet PXLISTEN --ignore "$port" >"$tmp/listen.log" 2>&1 &
        listener=$!
        wait_echo PXLISTEN "$port" "$listener" || { echo "bench-check: storescp did not start" >&2; exit 1; }
        ;;
    esac
    us=$(time_us_checked storescu -aec PXLISTEN 127.0.0.1 "$port" +sd "$sets/web-$2")
    hwm_kib=$(awk '/VmHWM/ {print $2}' "/proc/$listener/status")
    kill -TERM "$listener" 2>/dev/null || true
    wait "$listener" 2>/dev/null || true
    listener=
    [ "$1" = storescp ] || expect "px-listen instances" "$(count "$rx" '*.dcm')" "$2"
    echo "$us"
}
run_px_listen() { receive_with px-listen "$1"; }
run_storescp() { receive_with storescp "$1"; }

failed=()
# speed_case NAME PX_RUN ANCHOR_RUN WHAT [ROUNDS]: ROUNDS (default $runs) interleaved rounds at $small
# instances (the order alternating with the round), measured again once when the ratio is more than 25% below
# the budget.
speed_case() {
    local name=$1 px_run=$2 anchor_run=$3 what=$4 rounds=${5:-$runs} attempt r s px_us anchor_us speed floor verdict
    for attempt in 1 2; do
        s="$tmp/samples-$name-$attempt"
        mkdir -p "$s"
        for r in $(seq "$rounds"); do
            if [ $((r % 2)) = 1 ]; then
                "$px_run" "$small" >>"$s/px"
                "$anchor_run" "$small" >>"$s/anchor"
            else
                "$anchor_run" "$small" >>"$s/anchor"
                "$px_run" "$small" >>"$s/px"
            fi
        done
        px_us=$(median <"$s/px")
        anchor_us=$(median <"$s/anchor")
        # The median of the rounds' ratios: each round's two runs ran back to back, so load that drifts between
        # rounds (this machine's slow spells) cancels out of the ratio.
        speed=$(paste "$s/anchor" "$s/px" | awk '{ printf "%.4f\n", $1 / $2 }' | median)
        speed=$(ratio "$speed" 1)
        floor=$(awk -v b="${budget[$name]}" 'BEGIN { printf "%.2f", 0.75 * b }')
        verdict=ok
        if awk -v s="$speed" -v f="$floor" 'BEGIN { exit !(s < f) }'; then
            verdict="BELOW $floor"
            [ "$attempt" = 2 ] || verdict="$verdict, measuring again"
        fi
        printf '%-9s px %9s ms  %-34s %9s ms  speed ratio %5s (budget %s, floor %s)  %s\n' "$name" "$(ms "$px_us")" \
            "$what" "$(ms "$anchor_us")" "$speed" "${budget[$name]}" "$floor" "$verdict"
        [ "$verdict" != ok ] || return 0
    done
    failed+=("$name")
}

if [[ " $parts " == *" speed "* ]]; then
    echo "== speed: anchor time / px time (above 1: px faster; median of the rounds' ratios), $runs interleaved rounds, $small instances"
    speed_case echo run_px_echo run_echoscu "echoscu"
    speed_case find run_px_find run_findscu "findscu -X"
    speed_case web-curl run_px_get run_curl "curl --parallel (per series)"
    speed_case web-dwc run_px_get run_dwc "dicomweb-client iter_study"
    speed_case sync run_px_sync run_movescu "movescu -> storescp -od"
    # 3 rounds: a zip run costs several folder runs (deflate; docs/benchmarks.rst, "Zip writing").
    speed_case zip run_px_sync_zip run_px_sync "px-sync -> folder" 3
    speed_case receive run_px_listen run_storescp "storescp --ignore"
fi

# rss PATH N: px's peak RSS in KiB on PATH at N instances, one run.
rss() {
    local k=() key
    case $1 in
    find)
        for key in $(find_keys "$2"); do k+=(-k "$key"); done
        peak_rss_kib "$bin/px-find" --backend native --aec QRSCP --level image "${k[@]}" \
            --QueryReturnTags SOPInstanceUID,InstanceNumber --format ndjson "127.0.0.1:$qr_port" ;;
    web-get) rm -rf "$tmp/get"; peak_rss_kib "$bin/px-get" "$url" --StudyInstanceUID "$(study web "$2")" -d "$tmp/get" ;;
    sync) rm -rf "$tmp/sync"; peak_rss_kib "$bin/px-sync" --backend native "$peer" "$tmp/sync" --StudyInstanceUID "$(study web "$2")" ;;
    zip) rm -rf "$tmp/zip"; peak_rss_kib "$bin/px-sync" --backend native "$peer" "zip:$tmp/zip" --StudyInstanceUID "$(study web "$2")" ;;
    push) peak_rss_kib "$bin/px-push" --backend native "STORESCP@127.0.0.1:$scp_port" "$sets/web-$2" ;;
    receive) receive_with px-listen "$2" >/dev/null; echo "$hwm_kib" ;;
    esac
}
# memory_case PATH: RSS at $small and $large instances (one run each: peak RSS hardly moves from run to run),
# measured again once when RSS(large) > 1.25 x RSS(small) + 3 MiB.
memory_case() {
    local path=$1 attempt s r_small r_large limit verdict
    for attempt in 1 2; do
        s="$tmp/rss-$path-$attempt"
        mkdir -p "$s"
        rss "$path" "$small" >>"$s/small"
        rss "$path" "$large" >>"$s/large"
        r_small=$(median <"$s/small")
        r_large=$(median <"$s/large")
        limit=$((r_small * 5 / 4 + 3072))
        verdict=ok
        if [ "$r_large" -gt "$limit" ]; then
            verdict="ABOVE the limit"
            [ "$attempt" = 2 ] || verdict="$verdict, measuring again"
        fi
        printf '%-9s peak RSS %6.1f MB at %d, %6.1f MB at %d: %4.2fx (limit %.1f MB)  %s\n' "$path" \
            "$(ms "$r_small" | awk '{print $1 / 1.024}')" "$small" "$(ms "$r_large" | awk '{print $1 / 1.024}')" "$large" \
            "$(ratio "$r_large" "$r_small")" "$(ms "$limit" | awk '{print $1 / 1.024}')" "$verdict"
        [ "$verdict" != ok ] || return 0
    done
    failed+=("memory-$path")
}

if [[ " $parts " == *" memory "* ]]; then
    echo "== memory: px's peak RSS at $small and $large instances, one run each (limit 1.25 x RSS($small) + 3 MiB)"
    for path in find web-get sync zip push receive; do memory_case "$path"; done
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "bench-check: FAILED (${failed[*]}), in $((SECONDS - started)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    exit 1
fi
echo "bench-check: ok, in $((SECONDS - started)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
