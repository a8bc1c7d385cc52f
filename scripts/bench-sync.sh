#!/usr/bin/env bash
# px-sync benchmark (issue 12), not a test: 300 CT instances (512x512, 16 bit) in 10 studies of 30 in Orthanc,
# synced into an empty folder by
#   - px-sync (native backend, C-GET, --parallel 4; and --parallel 1)
#   - movescu of the 10 studies (one process and association each) into storescp, both TCP_NODELAY=1
# in interleaved rounds (medians, ratios to movescu), then a no-op re-run of px-sync over 10,000 indexed
# instances (100 studies of 100 small instances, Orthanc -> folder already in sync). dicomsync 1.3.0 has no
# DIMSE source and dicomtrolley 4.1.0 retrieves over DICOMweb only, so neither does this job (see the note).
# Prints JSON lines.
#
# usage: scripts/bench-sync.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_ROUNDS (default 5), PX_BENCH_NOOP (default 10000 instances; 0 skips the no-op part),
#        PX_BENCH_BIN (use the px-sync in this folder instead of building a release one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
rounds=${PX_BENCH_ROUNDS:-5}
noop=${PX_BENCH_NOOP:-10000}
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

echo "== Orthanc -> folder, 300 CT in 10 studies, median of $rounds interleaved rounds"
samples=$(mktemp -d)
for _ in $(seq "$rounds"); do
    rm -rf "$work/sync-out" "$scp_dir/in" && mkdir -p "$scp_dir/in"
    time_ms movescu_all >>"$samples/movescu"
    rm -rf "$work/sync-out"
    time_ms "$bin/px-sync" --backend native "$peer" "$work/sync-out" --parallel 4 >>"$samples/px4"
    [ "$(find "$work/sync-out" -name '*.dcm' | wc -l)" = 300 ] || { echo "px-sync did not store 300 files" >&2; exit 1; }
    rm -rf "$work/sync-out"
    time_ms "$bin/px-sync" --backend native "$peer" "$work/sync-out" --parallel 1 >>"$samples/px1"
done
mv_ms=$(median <"$samples/movescu")
echo "{\"tool\": \"movescu x10 into storescp\", \"median_ms\": $mv_ms}"
for p in 4 1; do
    px_ms=$(median <"$samples/px$p")
    echo "{\"tool\": \"px-sync --parallel $p (native, C-GET)\", \"median_ms\": $px_ms, \"speedup_vs_movescu\": $(ratio "$mv_ms" "$px_ms")}"
done
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
rm -rf "$work/noop-out"
"$bin/px-sync" --backend native "$peer" "$work/noop-out" --PatientID "NOOP*" </dev/null >/dev/null
samples=$(mktemp -d)
for _ in $(seq "$rounds"); do
    time_ms "$bin/px-sync" --backend native "$peer" "$work/noop-out" --PatientID 'NOOP*' >>"$samples/noop"
done
echo "{\"tool\": \"px-sync no-op re-run, $noop instances in 100 studies\", \"median_ms\": $(median <"$samples/noop")}"
rm -rf "$samples"
