#!/usr/bin/env bash
# Folder place index benchmark (issue 12), not a test: N small instances (default 10,000: 100 patients,
# 1 study and 4 series each, 25 instances a series, 2 KiB of pixel data each) written with pydicom, then
#
#   px-ls PLACE (cold)       first run: the index is made, every header is read
#   px-ls PLACE (no-op)      nothing changed: a walk and a stat per file, no header read (goal: < 1 s)
#   px-ls PLACE (1% new)     100 files added: only those are read
#
# each timed as a whole px-ls process (start, open the index, refresh, one query that matches nothing, so the
# figure is the refresh), median of PX_BENCH_RUNS for the no-op run. JSON lines on stdout.
#
# usage: scripts/bench-index.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_INSTANCES (default 10000), PX_BENCH_RUNS (default 5),
#        PX_BENCH_CONFIG (release, the default, or debug: an existing debug build, no release build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
count=${PX_BENCH_INSTANCES:-10000}
runs=${PX_BENCH_RUNS:-5}
config=${PX_BENCH_CONFIG:-release}
python=${PX_VENV:-$root/.venv}/bin/python
export LC_ALL=C

if [ "$config" = release ]; then
    swift build -c release --static-swift-stdlib --product px-ls >&2
    bin=$(swift build -c release --show-bin-path)
else
    bin=$(swift build --show-bin-path)
fi
place="$work/index-place-$count"
rm -rf "$place"
mkdir -p "$place"
"$python" - "$place" "$count" <<'PY'
import sys, os
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian
place, count = sys.argv[1], int(sys.argv[2])
ds = Dataset()
ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.7"
ds.Modality = "OT"; ds.StudyDate = "20240101"
ds.Rows = 32; ds.Columns = 32; ds.BitsAllocated = 16; ds.BitsStored = 16; ds.HighBit = 15
ds.SamplesPerPixel = 1; ds.PhotometricInterpretation = "MONOCHROME2"; ds.PixelRepresentation = 0
ds.PixelData = bytes(2048)
meta = FileMetaDataset(); meta.MediaStorageSOPClassUID = ds.SOPClassUID; meta.TransferSyntaxUID = ExplicitVRLittleEndian
ds.file_meta = meta
for n in range(count):
    patient, rest = divmod(n, 100)
    series, instance = divmod(rest, 25)
    ds.PatientID = f"P{patient:04d}"; ds.PatientName = f"BENCH^{patient}"
    ds.StudyInstanceUID = f"1.2.826.0.1.3680043.99.{patient}"
    ds.SeriesInstanceUID = f"{ds.StudyInstanceUID}.{series}"
    ds.SOPInstanceUID = f"{ds.SeriesInstanceUID}.{instance}"
    meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    folder = f"{place}/P{patient:04d}/{series}"
    os.makedirs(folder, exist_ok=True)
    ds.save_as(f"{folder}/{instance}.dcm", enforce_file_format=True)
PY

seconds() {  # the wall time of one px-ls run over the place, in seconds
    local start end
    start=$(date +%s%N)
    "$bin/px-ls" "$place" --level study --PatientID NOBODY --format ndjson >/dev/null
    end=$(date +%s%N)
    printf '%d.%09d\n' $(((end - start) / 1000000000)) $(((end - start) % 1000000000))
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
report() { printf '{"bench":"index","case":"%s","instances":%d,"seconds":%.3f,"config":"%s"}\n' "$1" "$2" "$3" "$config"; }

report cold "$count" "$(seconds)"
report no-op "$count" "$(for _ in $(seq "$runs"); do seconds; done | median)"
extra=$((count / 100))
"$python" - "$place" "$extra" <<'PY'
import sys, shutil, glob, pydicom
place, extra = sys.argv[1], int(sys.argv[2])
template = pydicom.dcmread(sorted(glob.glob(place + "/P0000/0/*.dcm"))[0])
for n in range(extra):
    template.SOPInstanceUID = f"1.2.826.0.1.3680043.99.0.9.{n}"
    template.file_meta.MediaStorageSOPInstanceUID = template.SOPInstanceUID
    template.save_as(f"{place}/P0000/0/new-{n}.dcm", enforce_file_format=True)
PY
report one-percent-new "$((count + extra))" "$(seconds)"
rm -rf "$place"
