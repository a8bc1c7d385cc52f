#!/usr/bin/env bash
# bench-sync-zip.sh - folder -> zip place (issue 12), not a test: the 300 CT images as 10 studies in a
# <patient>/<study>/ folder tree, archived into a zipped-studies folder (one <patient>/<study>.zip each) by
#   - px-sync SRC zip:DEST (release build; the source's index removed before each run, so px pays for
#     reading the headers every time, as dicomsync does)
#   - dicomsync 1.3.0: `dicomsync send src:* zipped` between a dicom_root and a zipped_root place
# each into a fresh destination, in interleaved rounds; medians and the ratio. Prints JSON lines.
#
# usage: scripts/bench-sync-zip.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_ROUNDS (default 5), PX_BENCH_BIN (a folder with px-sync; default: a release build),
#        PX_DICOMSYNC_VENV (default: <project>/.bench-venv-dicomsync, made here with dicomsync==1.3.0)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
rounds=${PX_BENCH_ROUNDS:-5}
python=${PX_VENV:-$root/.venv}/bin/python
venv=${PX_DICOMSYNC_VENV:-$root/.bench-venv-dicomsync}
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/bench-common.sh"
studies=$(bench_ct10x30 "$work")
if [ -n "${PX_BENCH_BIN:-}" ]; then
    bin=$PX_BENCH_BIN
else
    (cd "$root" && swift build -c release --static-swift-stdlib --product px-sync >/dev/null)
    bin="$root/.build/release"
fi
if [ ! -x "$venv/bin/dicomsync" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "dicomsync==1.3.0"
fi

# The source tree dicomsync reads: ROOT/<patient>/<study>/*.dcm (hard links to the regrouped corpus).
src="$work/sync-zip-src"
if [ ! -f "$src/.complete" ]; then
    rm -rf "$src" && mkdir -p "$src"
    "$python" - "$studies" "$src" <<'PY'
import sys, glob, os, pydicom
for path in sorted(glob.glob(sys.argv[1] + "/*.dcm")):
    ds = pydicom.dcmread(path, stop_before_pixels=True)
    folder = os.path.join(sys.argv[2], "patient1", "study" + str(ds.StudyID))
    os.makedirs(folder, exist_ok=True)
    os.link(path, os.path.join(folder, os.path.basename(path)))
PY
    touch "$src/.complete"
fi
settings="$work/sync-zip-dicomsync"
samples=$(mktemp -d)
trap 'rm -rf "$samples"' EXIT
dicomsync_round() {
    rm -rf "$settings" "$work/sync-zip-out-ds" && mkdir -p "$settings" "$work/sync-zip-out-ds"
    (cd "$settings" && "$venv/bin/dicomsync" init >/dev/null 2>&1 \
        && "$venv/bin/dicomsync" place add dicom_root src "$src" >/dev/null 2>&1 \
        && "$venv/bin/dicomsync" place add zipped_root zipped "$work/sync-zip-out-ds" >/dev/null 2>&1)
    (cd "$settings" && time_ms "$venv/bin/dicomsync" send 'src:*' zipped)
}
px_round() {
    rm -rf "$src/.px" "$work/sync-zip-out-px"
    time_ms "$bin/px-sync" "$src" "zip:$work/sync-zip-out-px"
}
echo "== folder -> zip place, 300 CT in 10 studies, median of $rounds interleaved rounds"
for _ in $(seq "$rounds"); do
    dicomsync_round >>"$samples/dicomsync"
    px_round >>"$samples/px"
done
ds=$(median <"$samples/dicomsync")
px=$(median <"$samples/px")
zips_ds=$(find "$work/sync-zip-out-ds" -name '*.zip' | wc -l)
zips_px=$(find "$work/sync-zip-out-px" -name '*.zip' | wc -l)
bytes_ds=$(find "$work/sync-zip-out-ds" -name '*.zip' -printf '%s\n' | awk '{s+=$1} END {print s}')
bytes_px=$(find "$work/sync-zip-out-px" -name '*.zip' -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "{\"tool\": \"dicomsync 1.3.0 send\", \"median_ms\": $ds, \"zips\": $zips_ds, \"bytes\": $bytes_ds}"
echo "{\"tool\": \"px-sync folder -> zip\", \"median_ms\": $px, \"zips\": $zips_px, \"bytes\": $bytes_px, \"speedup\": $(ratio "$ds" "$px")}"
