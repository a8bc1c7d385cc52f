#!/usr/bin/env bash
# bench-scale.sh - archive scale (issue 34): peak RSS and wall time of px-sync and px-ls at a small and a large
# number of small instances (128x128 16-bit, about 32 KB each, 50 per series, 2 series per study), side by side
# in one run, and the plan and no-op of a folder -> folder px-sync over an index of many tiny instances.
#
# Paths measured at SMALL and LARGE instances (one run each per round, median over rounds):
#   sync       px-sync ORTHANC DIR            (node -> folder, the retrieve px chooses: C-GET)
#   sync-noop  the same again                 (nothing to transfer)
#   ls         px-ls --level image --format ndjson DIR
#   f2f        px-sync DIR DIR2               (folder -> folder)
#   f2f-noop   the same again
# and, part "more", the other paths at both sizes (Orthanc with its DICOMweb plugin; px-listen native as the
# receiver, its peak read from /proc/PID/status VmHWM when it is stopped):
#   find       px-find ORTHANC --level image --format ndjson
#   get        px-get ORTHANC -d DIR, the studies read from px-find's NDJSON on stdin (C-GET)
#   web-get    px-get URL -d DIR, the same studies (WADO-RS)
#   move       px-move ORTHANC --destination PXLISTEN, the same studies (C-MOVE into px-listen)
#   listen     px-listen receiving the moved instances
#   push       px-push PXLISTEN@... DATA-DIR (C-STORE of every file on one association)
#   listen-push  px-listen receiving the pushed ones
#   serve-find px-find PXSERVE --level image, px-serve (native) serving the pushed folder
#   serve-get  px-get PXSERVE -d DIR, every study (C-GET from px-serve)
#   serve      px-serve itself over both (its index made at start): its VmHWM
# Index case, INDEX tiny instances (about 600 bytes, no Pixel Data; 100 per series, 1 series per study), source
# and destination folders of hard links to the same files, each with its own index (built by a first sync):
#   plan       px-sync --dry-run SRC EMPTY    (every study planned: the destination holds none)
#   noop       px-sync SRC DST                (every study already present)
#
# The instances and Orthanc's storage (its own configuration, free ports, scripts/orthanc-start.sh) are made
# once and kept under WORKDIR/scale/ between runs; loading Orthanc (storescu, one association) is timed the
# first time and the time kept in WORKDIR/scale/orthanc-N/load-seconds.
#
# usage: scripts/bench-scale.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_BIN    a multi-call px binary or a folder holding one (default: `make release`, .build/release/px)
#        PX_SCALE_SIZES  "SMALL LARGE" (default "300 30000")
#        PX_SCALE_INDEX  instances of the index case (default 100000; 0 skips it)
#        PX_SCALE_RUNS   rounds of the paths (default 1)
#        PX_SCALE_INDEX_RUNS  rounds of the index case (default 3)
#        PX_SCALE_PARTS  "paths more index" (default), or some of them
#        PX_VENV         the test venv (pydicom)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
read -r small large <<<"${PX_SCALE_SIZES:-300 30000}"
index_size=${PX_SCALE_INDEX:-100000}
runs=${PX_SCALE_RUNS:-1}
index_runs=${PX_SCALE_INDEX_RUNS:-3}
parts=${PX_SCALE_PARTS:-paths more index}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/lib.sh"
. "$root/scripts/bench-common.sh"

px=${PX_BENCH_BIN:-}
if [ -z "$px" ]; then
    make -C "$root" release >&2
    px="$root/.build/release/px"
fi
[ -d "$px" ] && px="$px/px"
[ -x "$px" ] || { echo "bench-scale: $px is not an executable" >&2; exit 1; }
px=$(cd "$(dirname "$px")" && pwd)/$(basename "$px")
scale="$work/scale"
# The indexes px caches for folders it only reads stay with the data (and are kept between runs).
export XDG_CACHE_HOME="$scale/cache"
bin="$scale/bin"
rm -rf "$bin" && mkdir -p "$bin"
for tool in px-sync px-ls px-find px-get px-move px-push px-listen px-serve; do ln -s "$px" "$bin/$tool"; done
echo "bench-scale: $px ($("$bin/px-ls" --version)); sizes $small $large, index $index_size;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# make_instances N DIR [tiny]: N instances in DIR (made once): 32 KB images, or ~600-byte headers without
# Pixel Data. One template file, its UIDs (all of one length) replaced byte for byte, so making 100,000 takes
# seconds.
make_instances() {
    local n=$1 dir=$2 kind=${3:-image}
    [ -f "$dir/.complete" ] && return 0
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" - "$n" "$dir" "$kind" <<'PY'
import os, sys
import struct
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian
n, out, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
per_series, per_study = (50, 2) if kind == "image" else (100, 1)
# Fixed-width UIDs: study S, series R, instance I as zero-padded numbers, so one template's bytes can be patched.
root = "1.2.826.0.1.3680043.10.1043.9"
def uids(i):
    series = i // per_series
    study = series // per_study
    return (f"{root}.1.{study:07d}", f"{root}.2.{series:08d}", f"{root}.3.{i:09d}")
meta = FileMetaDataset()
meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.7"
meta.TransferSyntaxUID = ExplicitVRLittleEndian
ds = Dataset()
ds.file_meta = meta
ds.SOPClassUID = meta.MediaStorageSOPClassUID
ds.Modality, ds.PatientName, ds.StudyDate = "OT", "Scale^Bench", "20260101"
ds.StudyID, ds.AccessionNumber, ds.SeriesNumber, ds.InstanceNumber = "1", "SCALE", 1, 1
study, series, sop = uids(0)
ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.SOPInstanceUID = study, series, sop
meta.MediaStorageSOPInstanceUID = sop
ds.PatientID = "PXSCALE0000000"
if kind == "image":
    ds.Rows = ds.Columns = 128
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 12, 11, 0
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.PixelData = struct.pack("<16384H", *(v % 4096 for v in range(128 * 128)))
template = os.path.join(out, "template.tmp")
ds.save_as(template, enforce_file_format=True)
data = open(template, "rb").read()
os.remove(template)
assert data.count(sop.encode()) == 2 and data.count(series.encode()) == 1 and data.count(study.encode()) == 1
for i in range(n):
    s, r, o = uids(i)
    patient = f"PXSCALE{(i // (per_series * per_study)) // 10:07d}"  # ten studies a patient
    body = (data.replace(sop.encode(), o.encode()).replace(series.encode(), r.encode())
            .replace(study.encode(), s.encode()).replace(b"PXSCALE0000000", patient.encode()))
    sub = os.path.join(out, f"{i // 1000:04d}")
    if i % 1000 == 0:
        os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"{i:09d}.dcm"), "wb") as f:
        f.write(body)
PY
    touch "$dir/.complete"
}

# measured ROUND-FILE CMD...: runs CMD (stdin /dev/null, stdout kept in $scale/last.out), appends "MS KIB CPU-MS"
# (wall time, peak RSS and user + system CPU time of the child) to ROUND-FILE; a failure ends the script.
measured() {
    local file=$1
    shift
    "$python" -c '
import resource, subprocess, sys, time
t0 = time.monotonic()
with open(sys.argv[1], "wb") as out:
    r = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE)
ms = (time.monotonic() - t0) * 1000
if r.returncode != 0:
    sys.exit(f"{sys.argv[2]} failed ({r.returncode}): {r.stderr.decode()[-800:]}")
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{ms:.0f} {usage.ru_maxrss} {(usage.ru_utime + usage.ru_stime) * 1000:.0f}")
' "$scale/last.out" "$@" >>"$file" || exit 1
}

# report NAME SMALL-FILE LARGE-FILE: medians of both sizes and the ratios.
report() {
    local sm sk lm lk
    sm=$(cut -d' ' -f1 "$2" | median)
    sk=$(cut -d' ' -f2 "$2" | median)
    lm=$(cut -d' ' -f1 "$3" | median)
    lk=$(cut -d' ' -f2 "$3" | median)
    printf '%-10s %6s: %8s ms %7s MiB   %6s: %8s ms %7s MiB   RSS x%s  time/instance %s -> %s ms\n' \
        "$1" "$small" "$sm" "$(awk -v k="$sk" 'BEGIN{printf "%.1f", k/1024}')" "$large" "$lm" \
        "$(awk -v k="$lk" 'BEGIN{printf "%.1f", k/1024}')" "$(ratio "$lk" "$sk")" \
        "$(awk -v t="$sm" -v n="$small" 'BEGIN{printf "%.3f", t/n}')" \
        "$(awk -v t="$lm" -v n="$large" 'BEGIN{printf "%.3f", t/n}')"
}

pidfiles=()
cleanup() {
    local f
    for f in "${pidfiles[@]}"; do [ ! -s "$f" ] || bash "$root/scripts/peer-stop.sh" "$f" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

results="$scale/results"
rm -rf "$results" && mkdir -p "$results"

if [[ " $parts " == *" paths "* ]]; then
    declare -A peer
    for n in $small $large; do
        started=$SECONDS
        make_instances "$n" "$scale/data-$n"
        echo "bench-scale: $n instances ready ($((SECONDS - started)) s)"
        orthanc="$scale/orthanc-$n"
        [ -f "$orthanc/.loaded" ] || rm -rf "$orthanc"
        read -r dicom_port _ < <(bash "$root/scripts/orthanc-start.sh" "$orthanc" | tail -1)
        pidfiles+=("$orthanc/orthanc.pid")
        if [ ! -f "$orthanc/.loaded" ]; then
            started=$SECONDS
            storescu -aec ORTHANC +sd +r +sp '*.dcm' 127.0.0.1 "$dicom_port" "$scale/data-$n" >/dev/null 2>&1
            echo $((SECONDS - started)) >"$orthanc/load-seconds"
            touch "$orthanc/.loaded"
        fi
        echo "bench-scale: Orthanc holds $n instances (loaded in $(cat "$orthanc/load-seconds") s)"
        peer[$n]="ORTHANC@127.0.0.1:$dicom_port"
    done
    out="$scale/out"
    for round in $(seq "$runs"); do
        for n in $small $large; do
            rm -rf "$out" && mkdir -p "$out"
            measured "$results/sync-$n" "$bin/px-sync" --backend native "${peer[$n]}" "$out/sync"
            [ "$(find "$out/sync" -name '*.dcm' | wc -l)" = "$n" ] || { echo "bench-scale: sync placed a wrong count" >&2; exit 1; }
            measured "$results/sync-noop-$n" "$bin/px-sync" --backend native "${peer[$n]}" "$out/sync"
            measured "$results/ls-$n" "$bin/px-ls" --level image --format ndjson "$out/sync"
            [ "$(grep -c "\"QueryRetrieveLevel\":\"IMAGE\"" "$scale/last.out")" = "$n" ] || { echo "bench-scale: px-ls listed a wrong count" >&2; exit 1; }
            measured "$results/f2f-$n" "$bin/px-sync" "$out/sync" "$out/f2f"
            [ "$(find "$out/f2f" -name '*.dcm' | wc -l)" = "$n" ] || { echo "bench-scale: f2f placed a wrong count" >&2; exit 1; }
            measured "$results/f2f-noop-$n" "$bin/px-sync" "$out/sync" "$out/f2f"
        done
    done
    rm -rf "$out"
    cleanup
    pidfiles=()
    echo "bench-scale: median of $runs round(s), peak RSS (getrusage of the child) and wall time"
    for path in sync sync-noop ls f2f f2f-noop; do
        report "$path" "$results/$path-$small" "$results/$path-$large"
    done
fi

# listen_start DIR: px-listen native on a free port into DIR, as PXLISTEN; sets listen_pid and listen_port.
listen_start() {
    listen_port=$(free_port)
    "$bin/px-listen" --backend native --port "$listen_port" --aet PXLISTEN -d "$1" >/dev/null 2>"$scale/listen.log" &
    listen_pid=$!
    wait_echo PXLISTEN "$listen_port" "$listen_pid" || { echo "bench-scale: px-listen did not start" >&2; exit 1; }
}

# listen_stop FILE: stops px-listen, appends "0 VmHWM-KiB 0" to FILE (its peak, as measured appends).
listen_stop() {
    server_stop "$listen_pid" "$1"
}

# serve_start DIR: px-serve on a free port over DIR, as PXSERVE (its index made before it answers); sets
# serve_pid and serve_port.
serve_start() {
    serve_port=$(free_port)
    "$bin/px-serve" --port "$serve_port" --aet PXSERVE "$1" >/dev/null 2>"$scale/serve.log" &
    serve_pid=$!
    # Indexing 30,000 files comes first: up to a minute.
    local tries
    for tries in 1 2 3 4 5 6; do wait_echo PXSERVE "$serve_port" "$serve_pid" && return 0; done
    echo "bench-scale: px-serve did not start" >&2
    exit 1
}

# server_stop PID FILE: stops the server PID, appends "0 VmHWM-KiB 0" to FILE.
server_stop() {
    local hwm
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$1/status")
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
    echo "0 $hwm 0" >>"$2"
}

# count_files DIR N NAME: fails the script unless DIR holds N .dcm files.
count_files() {
    local got
    got=$(find "$1" -name '*.dcm' | wc -l)
    [ "$got" = "$2" ] || { echo "bench-scale: $3 placed $got files, not $2" >&2; exit 1; }
}

if [[ " $parts " == *" more "* ]]; then
    out="$scale/out"
    declare -A dicom http
    for n in $small $large; do
        make_instances "$n" "$scale/data-$n"
        orthanc="$scale/orthanc-$n"
        [ -f "$orthanc/.loaded" ] || { echo "bench-scale: part more needs part paths' Orthanc ($n)" >&2; exit 1; }
    done
    for round in $(seq "$runs"); do
        for n in $small $large; do
            rm -rf "$out" && mkdir -p "$out"
            orthanc="$scale/orthanc-$n"
            # Orthanc again with its DICOMweb plugin and px-listen as a C-MOVE destination on a port of its own.
            bash "$root/scripts/peer-stop.sh" "$orthanc/orthanc.pid" >/dev/null 2>&1 || true
            listen_start "$out/moved"
            read -r dicom_port http_port < <(PX_ORTHANC_DICOMWEB=1 \
                PX_ORTHANC_MODALITIES="pxlisten=PXLISTEN@127.0.0.1:$listen_port" \
                bash "$root/scripts/orthanc-start.sh" "$orthanc" | tail -1)
            pidfiles+=("$orthanc/orthanc.pid")
            node="ORTHANC@127.0.0.1:$dicom_port"
            url="http://127.0.0.1:$http_port/dicom-web"
            "$bin/px-find" "$node" --level study --format ndjson </dev/null | grep '"StudyInstanceUID"' >"$out/studies.ndjson"
            measured "$results/find-$n" "$bin/px-find" "$node" --level image --format ndjson
            [ "$(grep -c '"SOPInstanceUID"' "$scale/last.out")" = "$n" ] || { echo "bench-scale: px-find found a wrong count" >&2; exit 1; }
            measured "$results/get-$n" sh -c 'exec "$0" "$1" -d "$2" <"$3"' "$bin/px-get" "$node" "$out/get" "$out/studies.ndjson"
            count_files "$out/get" "$n" px-get
            measured "$results/web-get-$n" sh -c 'exec "$0" "$1" -d "$2" <"$3"' "$bin/px-get" "$url" "$out/web" "$out/studies.ndjson"
            count_files "$out/web" "$n" "px-get (WADO-RS)"
            rm -rf "$out/get" "$out/web"
            measured "$results/move-$n" sh -c 'exec "$0" "$1" --destination PXLISTEN <"$2"' "$bin/px-move" "$node" "$out/studies.ndjson"
            listen_stop "$results/listen-$n"
            count_files "$out/moved" "$n" "px-move into px-listen"
            rm -rf "$out/moved"
            listen_start "$out/pushed"
            measured "$results/push-$n" "$bin/px-push" "PXLISTEN@127.0.0.1:$listen_port" "$scale/data-$n"/[0-9]*
            listen_stop "$results/listen-push-$n"
            count_files "$out/pushed" "$n" "px-push into px-listen"
            # px-serve over what was pushed: its index made at start, every instance found, every study retrieved.
            serve_start "$out/pushed"
            measured "$results/serve-find-$n" "$bin/px-find" "PXSERVE@127.0.0.1:$serve_port" --level image --format ndjson
            [ "$(grep -c '"SOPInstanceUID"' "$scale/last.out")" = "$n" ] || { echo "bench-scale: px-find on px-serve found a wrong count" >&2; exit 1; }
            measured "$results/serve-get-$n" sh -c 'exec "$0" "$1" -d "$2" <"$3"' "$bin/px-get" "PXSERVE@127.0.0.1:$serve_port" "$out/served" "$out/studies.ndjson"
            count_files "$out/served" "$n" "px-get from px-serve"
            server_stop "$serve_pid" "$results/serve-$n"
            rm -rf "$out/served"
            bash "$root/scripts/peer-stop.sh" "$orthanc/orthanc.pid" >/dev/null 2>&1 || true
        done
    done
    rm -rf "$out"
    cleanup
    pidfiles=()
    echo "bench-scale: the other paths, median of $runs round(s), peak RSS (listen: px-listen's VmHWM) and wall time"
    for path in find get web-get move listen push listen-push serve-find serve-get serve; do
        report "$path" "$results/$path-$small" "$results/$path-$large"
    done
fi

if [[ " $parts " == *" index "* ]] && [ "$index_size" -gt 0 ]; then
    started=$SECONDS
    tiny="$scale/tiny-$index_size"
    make_instances "$index_size" "$tiny/src" tiny
    if [ ! -f "$tiny/.indexed" ]; then
        rm -rf "$tiny/dst" "$tiny/src/.px"* && cp -al "$tiny/src" "$tiny/dst"
        "$bin/px-sync" "$tiny/src" "$tiny/dst" </dev/null >/dev/null
        touch "$tiny/.indexed"
    fi
    echo "bench-scale: $index_size tiny instances indexed in two folders ($((SECONDS - started)) s); median of $index_runs rounds"
    for round in $(seq "$index_runs"); do
        rm -rf "$tiny/empty"
        measured "$results/plan" "$bin/px-sync" --dry-run "$tiny/src" "$tiny/empty"
        measured "$results/noop" "$bin/px-sync" "$tiny/src" "$tiny/dst"
    done
    for path in plan noop; do
        printf '%-10s %6s: %8s ms %7s MiB  (CPU %s ms)\n' "$path" "$index_size" "$(cut -d' ' -f1 "$results/$path" | median)" \
            "$(cut -d' ' -f2 "$results/$path" | median | awk '{printf "%.1f", $1/1024}')" \
            "$(cut -d' ' -f3 "$results/$path" | median)"
    done
fi
