#!/usr/bin/env bash
# bench-zip-deflate.sh - node -> zip against node -> folder (issue 34: the zip within 1.5x of the folder, a
# ratio folder time / zip time of at least 0.67), for a base px and a new one with each --zip-deflate mode,
# side by side in one run: Orthanc holds the gate's CT study (bench-check.sh's web set of N instances); each
# round runs, for every variant in turn, `px-sync --backend native ORTHANC zip:DIR` and `px-sync ... DIR`
# back to back (fresh folders), so each variant's ratio compares runs a few seconds apart. Prints, per
# variant, the medians of the zip and folder times, the median of the rounds' ratios folder/zip, the zip's
# bytes and how many of its instance entries are stored (zip method 0).
#
# usage: scripts/bench-zip-deflate.sh BASE_PX NEW_PX [WORKDIR]   (multi-call px binaries; WORKDIR default:
#        bench-data/ in the project). BASE_PX runs with no --zip-deflate (its own behaviour), NEW_PX with
#        --zip-deflate spare and with --zip-deflate all.
# env:   PX_BENCH_RUNS interleaved rounds (default 7), PX_BENCH_N instances (60 or 240, default 60),
#        PX_VENV (test venv: pydicom)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 BASE_PX NEW_PX [WORKDIR]" >&2; exit 2; }
work=${3:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
n=${PX_BENCH_N:-60}
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/lib.sh"
. "$root/scripts/bench-common.sh"

tmp="$work/zip-deflate"
rm -rf "$tmp" && mkdir -p "$tmp"
# A folder of px-* links per binary (the multi-call px dispatches on its name).
for side in base new; do
    px=$([ $side = base ] && echo "$1" || echo "$2")
    px=$(cd "$(dirname "$px")" && pwd)/$(basename "$px")
    mkdir -p "$tmp/$side-bin" && ln -s "$px" "$tmp/$side-bin/px-sync"
    echo "bench-zip-deflate: $side $("$tmp/$side-bin/px-sync" --version)"
done
sets=$(bench_ct_sets "$work" 60 240 4)
cleanup() { [ ! -s "$tmp/orthanc/orthanc.pid" ] || bash "$root/scripts/peer-stop.sh" "$tmp/orthanc/orthanc.pid" >/dev/null 2>&1 || true; }
trap cleanup EXIT
read -r dicom_port _ < <(bash "$root/scripts/orthanc-start.sh" "$tmp/orthanc" | tail -1)
storescu -aec ORTHANC 127.0.0.1 "$dicom_port" +sd "$sets/web-$n" >/dev/null 2>&1
peer="ORTHANC@127.0.0.1:$dicom_port"
uid=$(cat "$sets/web-$n.study")
echo "bench-zip-deflate: $n CT instances in Orthanc; $runs rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# variant NAME: the binary folder and the extra px-sync arguments of the variant.
variants=(base spare all)
bin_of() { [ "$1" = base ] && echo "$tmp/base-bin" || echo "$tmp/new-bin"; }
args_of() { [ "$1" = base ] || echo "--zip-deflate $1"; }
run_zip() {
    rm -rf "$tmp/zip-$1"
    # shellcheck disable=SC2046
    time_us_checked "$(bin_of "$1")/px-sync" --backend native "$peer" "zip:$tmp/zip-$1" --StudyInstanceUID "$uid" \
        $(args_of "$1")
}
run_folder() {
    rm -rf "$tmp/folder-$1"
    time_us_checked "$(bin_of "$1")/px-sync" --backend native "$peer" "$tmp/folder-$1" --StudyInstanceUID "$uid"
    [ "$(find "$tmp/folder-$1" -name '*.dcm' -type f | wc -l)" = "$n" ] || { echo "folder run short" >&2; exit 1; }
}
declare -A zips folders ratios
for round in $(seq "$runs"); do
    for v in "${variants[@]}"; do
        z=$(run_zip "$v")
        f=$(run_folder "$v")
        zips[$v]+="$z "
        folders[$v]+="$f "
        ratios[$v]+="$(ratio "$f" "$z") "
    done
    echo "bench-zip-deflate: round $round done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
for v in "${variants[@]}"; do
    archive=$(find "$tmp/zip-$v" -name '*.zip' -type f)
    read -r entries stored < <("$python" - "$archive" <<'PY'
import sys, zipfile
infos = [i for i in zipfile.ZipFile(sys.argv[1]).infolist() if i.filename.endswith(".dcm")]
print(len(infos), sum(1 for i in infos if i.compress_type == zipfile.ZIP_STORED))
PY
)
    [ "$entries" = "$n" ] || { echo "$v: $entries entries, not $n" >&2; exit 1; }
    printf '%-6s zip %8s ms  folder %8s ms  folder/zip %s  zip bytes %s  stored %s of %s\n' "$v" \
        "$(ms "$(tr ' ' '\n' <<<"${zips[$v]}" | grep . | median)")" \
        "$(ms "$(tr ' ' '\n' <<<"${folders[$v]}" | grep . | median)")" \
        "$(tr ' ' '\n' <<<"${ratios[$v]}" | grep . | median)" "$(stat -c %s "$archive")" "$stored" "$entries"
done
echo "bench-zip-deflate: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
