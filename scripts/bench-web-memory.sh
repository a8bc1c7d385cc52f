#!/usr/bin/env bash
# bench-web-memory.sh - WADO-RS memory (issue 34), not a test: does px's peak RSS grow with the number of
# instances retrieved over WADO-RS? Orthanc with its DICOMweb plugin holds two studies of 512x512 16-bit
# CT images (~0.5 MB each, make-qr-corpus.py --ct-bench): one of N instances and one of 5N (default
# N=120: 120 and 600). For each build and each study, in interleaved rounds (each run once per round, a
# fresh output folder each time):
#
#   px-get URL --StudyInstanceUID S -d DIR     (WADO-RS, --parallel default)
#   px-sync URL DIR --StudyInstanceUID S       (DICOMweb -> folder place)
#
# Prints one JSON line per build, tool and size: the median peak RSS (getrusage RUSAGE_CHILDREN ru_maxrss
# of the child), the median wall time, and the ratio peak(5N) / peak(N) (the goal: under 1.25).
#
# usage: scripts/bench-web-memory.sh [LABEL=PX_BINARY ...]
#   each argument a release `px` binary (multi-call: px-get and px-sync are links to it) and a label,
#   e.g. before=/tmp/px-main after=.build/release/px; default: this checkout's release px, built first.
# env:   PX_BENCH_RUNS (rounds, default 3), PX_BENCH_N (default 120), PX_BENCH_WORK (default bench-data/)
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=${PX_BENCH_WORK:-$root/bench-data}
runs=${PX_BENCH_RUNS:-3}
small=${PX_BENCH_N:-120}
large=$((small * 5))
python=${PX_VENV:-$root/.venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/bench-common.sh"

builds=("$@")
if [ ${#builds[@]} -eq 0 ]; then
    (cd "$root" && swift build -c release --static-swift-stdlib --product px >&2)
    builds=("px=$(cd "$root" && swift build -c release --show-bin-path)/px")
fi
# Each build's px-get and px-sync: links to its px (the multi-call binary dispatches on its name).
labels=()
for build in "${builds[@]}"; do
    label=${build%%=*}
    binary=$(cd "$(dirname "${build#*=}")" && pwd)/$(basename "${build#*=}")
    [ -x "$binary" ] || { echo "bench-web-memory.sh: $binary is not an executable" >&2; exit 1; }
    mkdir -p "$work/memory-bin/$label"
    for tool in px-get px-sync; do ln -sf "$binary" "$work/memory-bin/$label/$tool"; done
    labels+=("$label")
done

# --- the corpus: a study of N and a study of 5N CT instances (new UIDs for each, so neither shares any)
corpus="$work/web-memory-$small"
if [ ! -f "$corpus/.complete" ]; then
    rm -rf "$corpus" && mkdir -p "$corpus/ct"
    "$python" "$root/scripts/make-qr-corpus.py" --ct-bench "$large" "$corpus/ct" >/dev/null
    "$python" - "$corpus/ct" "$corpus" "$small" "$large" <<'PY'
import glob, os, sys, pydicom
from pydicom.uid import generate_uid
source, out, sizes = sys.argv[1], sys.argv[2], [int(n) for n in sys.argv[3:]]
files = sorted(glob.glob(source + "/*.dcm"))
for n in sizes:
    os.makedirs(f"{out}/{n}")
    study = generate_uid(entropy_srcs=["px-bench-web-memory", str(n)])
    series = generate_uid(entropy_srcs=["px-bench-web-memory-series", str(n)])
    for i, path in enumerate(files[:n]):
        ds = pydicom.dcmread(path)
        ds.StudyInstanceUID, ds.SeriesInstanceUID = study, series
        ds.SOPInstanceUID = generate_uid(entropy_srcs=["px-bench-web-memory", str(n), str(i)])
        ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
        ds.save_as(f"{out}/{n}/{os.path.basename(path)}", enforce_file_format=True)
    with open(f"{out}/{n}.study", "w") as f:
        f.write(study + "\n")
PY
    rm -rf "$corpus/ct"
    touch "$corpus/.complete"
fi

# --- Orthanc with the DICOMweb plugin, loaded with both studies
orthanc="$work/orthanc-web-memory"
rm -rf "$orthanc" && mkdir -p "$orthanc"
read -r dicom_port http_port < <(PX_ORTHANC_DICOMWEB=1 bash "$root/scripts/orthanc-start.sh" "$orthanc" | tail -1)
trap 'bash "$root/scripts/peer-stop.sh" "$orthanc/orthanc.pid" >/dev/null 2>&1 || true' EXIT
for n in "$small" "$large"; do
    storescu -aec ORTHANC 127.0.0.1 "$dicom_port" +sd "$corpus/$n" >/dev/null 2>&1
done
url="http://127.0.0.1:$http_port/dicom-web"

# measure OUT CMD...: runs CMD, prints "wall_us peak_rss_kib files" (the .dcm files under OUT).
measure() {
    local out=$1; shift
    "$python" -c '
import os, resource, subprocess, sys, time
t0 = time.perf_counter()
r = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t0
if r.returncode != 0:
    sys.exit(f"{sys.argv[2]} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
n = sum(len([x for x in files if x.endswith(".dcm")]) for _, _, files in os.walk(sys.argv[1]))
print(int(wall * 1e6), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, n)
' "$out" "$@"
}

tools=(px-get px-sync)
samples=$(mktemp -d)
echo "== WADO-RS memory: $small and $large CT instances from Orthanc $url, $runs interleaved rounds, builds: ${labels[*]}" >&2
for round in $(seq "$runs"); do
    for n in "$small" "$large"; do
        study=$(cat "$corpus/$n.study")
        for label in "${labels[@]}"; do
            for tool in "${tools[@]}"; do
                out="$work/web-memory-out"
                rm -rf "$out"
                bin="$work/memory-bin/$label"
                case $tool in
                px-get) line=$(measure "$out" "$bin/px-get" "$url" --StudyInstanceUID "$study" -d "$out") ;;
                px-sync) line=$(measure "$out" "$bin/px-sync" "$url" "$out" --StudyInstanceUID "$study") ;;
                esac
                read -r us kib files <<<"$line"
                [ "$files" -eq "$n" ] || { echo "$label $tool wrote $files files, not $n" >&2; exit 1; }
                echo "$us" >>"$samples/time.$label.$tool.$n"
                echo "$kib" >>"$samples/rss.$label.$tool.$n"
                echo "round $round: $label $tool $n: $((us / 1000)) ms, $((kib / 1024)) MB" >&2
            done
        done
    done
done
rm -rf "$work/web-memory-out"

for label in "${labels[@]}"; do
    for tool in "${tools[@]}"; do
        rss_small=$(median <"$samples/rss.$label.$tool.$small")
        for n in "$small" "$large"; do
            rss=$(median <"$samples/rss.$label.$tool.$n")
            us=$(median <"$samples/time.$label.$tool.$n")
            awk -v b="$label" -v t="$tool" -v n="$n" -v k="$rss" -v u="$us" -v s="$rss_small" 'BEGIN {
                printf "{\"build\": \"%s\", \"tool\": \"%s\", \"instances\": %d, \"peak_rss_MB\": %.1f, \"median_ms\": %.0f, \"rss_ratio_to_smallest\": %.2f}\n",
                    b, t, n, k / 1024, u / 1000, k / s }'
        done
    done
done
rm -rf "$samples"
