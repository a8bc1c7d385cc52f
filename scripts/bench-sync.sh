#!/usr/bin/env bash
# px-sync benchmark (issue 12), not a test: 300 CT instances (512x512, 16 bit) in 10 studies of 30 in Orthanc,
# synced into an empty folder by
#   - px-sync (native backend, C-GET, --parallel 4; and --parallel 1)
#   - movescu of the 10 studies (one process and association each) into storescp, both TCP_NODELAY=1
#   - px-sync Orthanc -> zip:DIR (one zip per study; --parallel 4)
# in interleaved rounds (medians, ratios to movescu), then a no-op re-run of px-sync over 10,000 indexed
# instances (100 studies of 100 small instances, Orthanc -> folder already in sync). dicomsync 1.3.0 has no
# DIMSE source and dicomtrolley 4.1.0 retrieves over DICOMweb only, so neither does this job (see the note).
# With PX_BENCH_BASE_BIN, a second build's px-sync (e.g. an install of main before a change) runs the folder
# and no-op cases too, interleaved with this one (the two in turn first), and each case gets new/base.
# Prints JSON lines (with every sample and the load average before and after each part).
#
# usage: scripts/bench-sync.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_ROUNDS (default 5), PX_BENCH_NOOP (default 10000 instances; 0 skips the no-op part),
#        PX_BENCH_BIN (use the px-sync in this folder instead of building a release one),
#        PX_BENCH_BASE_BIN (a folder with the base build's px-sync, e.g. PREFIX/bin of an install),
#        PX_BENCH_ZIP (default 1; 0 skips the Orthanc -> zip case)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
rounds=${PX_BENCH_ROUNDS:-5}
noop=${PX_BENCH_NOOP:-10000}
base=${PX_BENCH_BASE_BIN:-}
zip=${PX_BENCH_ZIP:-1}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/bench-common.sh"
ct=$(bench_ct300 "$work")
if [ -n "${PX_BENCH_BIN:-}" ]; then
    bin=$PX_BENCH_BIN  # a build already there (e.g. .build/debug for a quick look; figures then not comparable)
else
    (cd "$root" && swift build -c release --static-swift-stdlib --product px-sync >/dev/null)
    bin="$root/.build/release"
fi
# The builds compared: "new" is $bin, "base" the optional $base.
builds=new
[ -z "$base" ] || builds="new base"
build_dir() { if [ "$1" = base ]; then echo "$base"; else echo "$bin"; fi; }
# in_turn ROUND: the builds, the first one alternating with the round, so neither is always first.
in_turn() { if [ $(($1 % 2)) = 0 ] || [ -z "$base" ]; then echo "$builds"; else echo "base new"; fi; }
for b in $builds; do
    echo "{\"build\": \"$b\", \"px_sync\": \"$(build_dir "$b")/px-sync\", \"version\": \"$("$(build_dir "$b")/px-sync" --version)\"}"
done
load() { echo "{\"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"when\": \"$1\"}"; }
# samples FILE: the file's numbers as a JSON array.
samples() { paste -sd, "$1" | sed 's/,/, /g; s/^/[/; s/$/]/'; }
# vs_base NEW BASE: the new/base fields for the new build's line: the ratio of the medians, and the median of
# the per-round ratios (each round's two runs ran back to back, so load drifting between rounds cancels).
vs_base() {
    local ratios
    ratios=$(paste -d' ' "$1" "$2" | awk '{ printf "%.3f\n", $1 / $2 }' | median)
    echo ", \"new_over_base\": $(ratio "$(median <"$1")" "$(median <"$2")"), \"new_over_base_paired\": $(ratio "$ratios" 1)"
}

# --- 10 studies of 30 (the regrouping bench-move.sh uses): their StudyInstanceUIDs are the corpus's + ".1" ... ".10"
studies=$(bench_ct10x30 "$work")
base_study=$("$python" -c 'import glob, sys, pydicom; print(pydicom.dcmread(sorted(glob.glob(sys.argv[1] + "/*.dcm"))[0], stop_before_pixels=True).StudyInstanceUID)' "$ct")

# --- peers: Orthanc (knows storescp as STORESCP), storescp
scp_port=$(free_port)
orthanc="$work/orthanc-sync"
rm -rf "$orthanc"
ports=$(PX_ORTHANC_MODALITIES="storescp=STORESCP@127.0.0.1:$scp_port" bash "$root/scripts/orthanc-start.sh" "$orthanc" | tail -1)
dicom_port=${ports%% *}
scp_dir="$work/storescp-sync"
rm -rf "$scp_dir" && mkdir -p "$scp_dir/in"
trap 'bash "$root/scripts/peer-stop.sh" "$orthanc/orthanc.pid"; bash "$root/scripts/peer-stop.sh" "$scp_dir/storescp.pid" 2>/dev/null || true' EXIT
storescu -aec ORTHANC 127.0.0.1 "$dicom_port" "$studies"/*.dcm
setsid storescp -aet STORESCP -od "$scp_dir/in" "$scp_port" >>"$scp_dir/storescp.log" 2>&1 &
echo $! >"$scp_dir/storescp.pid"
for _ in $(seq 50); do echoscu -aec STORESCP 127.0.0.1 "$scp_port" 2>/dev/null && break; sleep 0.1; done
peer="ORTHANC@127.0.0.1:$dicom_port"

movescu_all() {
    for s in $(seq 1 10); do
        movescu -S -aec ORTHANC -aem STORESCP -k QueryRetrieveLevel=STUDY -k "StudyInstanceUID=$base_study.$s" \
            127.0.0.1 "$dicom_port" || return 1
    done
}

# sync_to_folder DIR P: DIR's px-sync from Orthanc into a fresh folder with --parallel P; its time in ms.
sync_to_folder() {
    rm -rf "$work/sync-out"
    time_ms "$1/px-sync" --backend native "$peer" "$work/sync-out" --parallel "$2"
    [ "$(find "$work/sync-out" -name '*.dcm' | wc -l)" = 300 ] || { echo "$1/px-sync did not store 300 files" >&2; exit 1; }
}
# sync_to_zip: the new px-sync from Orthanc into a fresh zip place (one zip per study); its time in ms.
sync_to_zip() {
    rm -rf "$work/sync-zip"
    time_ms "$bin/px-sync" --backend native "$peer" "zip:$work/sync-zip" --parallel 4
    [ "$(find "$work/sync-zip" -name '*.zip' | wc -l)" = 10 ] || { echo "px-sync did not write 10 zips" >&2; exit 1; }
}

echo "== Orthanc -> folder, 300 CT in 10 studies, median of $rounds interleaved rounds"
load start
samples=$(mktemp -d)
for r in $(seq "$rounds"); do
    rm -rf "$scp_dir/in" && mkdir -p "$scp_dir/in"
    time_ms movescu_all >>"$samples/movescu"
    for p in 4 1; do
        for b in $(in_turn "$r"); do sync_to_folder "$(build_dir "$b")" "$p" >>"$samples/$b$p"; done
    done
    [ "$zip" = 0 ] || sync_to_zip >>"$samples/zip"
done
load end
mv_ms=$(median <"$samples/movescu")
echo "{\"tool\": \"movescu x10 into storescp\", \"median_ms\": $mv_ms, \"samples_ms\": $(samples "$samples/movescu")}"
for p in 4 1; do
    for b in $builds; do
        px_ms=$(median <"$samples/$b$p")
        vs=""
        [ "$b" != new ] || [ -z "$base" ] || vs=$(vs_base "$samples/new$p" "$samples/base$p")
        echo "{\"tool\": \"px-sync --parallel $p (native, C-GET)\", \"build\": \"$b\", \"median_ms\": $px_ms, \"speedup_vs_movescu\": $(ratio "$mv_ms" "$px_ms")$vs, \"samples_ms\": $(samples "$samples/$b$p")}"
    done
done
if [ "$zip" != 0 ]; then
    zip_ms=$(median <"$samples/zip")
    echo "{\"tool\": \"px-sync Orthanc -> zip:DIR --parallel 4\", \"build\": \"new\", \"median_ms\": $zip_ms, \"zip_over_folder\": $(ratio "$zip_ms" "$(median <"$samples/new4")"), \"samples_ms\": $(samples "$samples/zip")}"
fi
rm -rf "$samples"

[ "$noop" -gt 0 ] || exit 0
echo "== no-op re-run over $noop indexed instances (Orthanc -> folder, already in sync)"
small="$work/small-$noop"
if [ ! -f "$small/.complete" ]; then
    rm -rf "$small" && mkdir -p "$small"
    "$python" - "$small" "$noop" <<'PY'
import os, sys
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, generate_uid
out, n = sys.argv[1], int(sys.argv[2])
for k in range(n):
    s, i = divmod(k, 100)
    ds = Dataset()
    ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.7"
    ds.SOPInstanceUID = f"2.25.{8000000000 + k}"
    ds.StudyInstanceUID = f"2.25.{7000000 + s}"
    ds.SeriesInstanceUID = f"2.25.{7100000 + s}"
    ds.PatientID, ds.PatientName = f"NOOP{s:03d}", "Noop^Bench"
    ds.Modality, ds.InstanceNumber, ds.StudyDate = "OT", i + 1, "20240101"
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID, ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPClassUID, ds.SOPInstanceUID
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.save_as(os.path.join(out, f"{k:05d}.dcm"), enforce_file_format=True)
PY
    touch "$small/.complete"
fi
find "$small" -name '*.dcm' -print0 | xargs -0 -n 2000 storescu -aec ORTHANC 127.0.0.1 "$dicom_port"
# Each build its own destination (their indexes need not share a format), synced once before the rounds.
for b in $builds; do
    rm -rf "$work/noop-out-$b"
    "$(build_dir "$b")/px-sync" --backend native "$peer" "$work/noop-out-$b" --PatientID "NOOP*" </dev/null >/dev/null
done
load start
samples=$(mktemp -d)
for r in $(seq "$rounds"); do
    for b in $(in_turn "$r"); do
        time_ms "$(build_dir "$b")/px-sync" --backend native "$peer" "$work/noop-out-$b" --PatientID 'NOOP*' >>"$samples/$b"
    done
done
load end
for b in $builds; do
    vs=""
    [ "$b" != new ] || [ -z "$base" ] || vs=$(vs_base "$samples/new" "$samples/base")
    echo "{\"tool\": \"px-sync no-op re-run, $noop instances in $(( (noop + 99) / 100 )) studies\", \"build\": \"$b\", \"median_ms\": $(median <"$samples/$b")$vs, \"samples_ms\": $(samples "$samples/$b")}"
done
rm -rf "$samples"
