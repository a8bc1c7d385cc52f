#!/usr/bin/env bash
# WADO-RS download benchmark (issue 13), not a test: 300 CT images of 512x512 16-bit (~158 MB, the
# make-qr-corpus.py --ct-bench corpus given ten study UIDs, 30 instances each) in Orthanc with its
# DICOMweb plugin, downloaded by the ten study UIDs:
#
#   px-get URL -d DIR                  (--parallel default, 4: the ten studies four at a time)
#   px-get URL -d DIR --parallel 1     (one request after the other, as the Python clients go)
#   dicomtrolley 4.1.0                 (scripts/bench-web-clients.py: WadoRS, a request per study)
#   dicomweb-client 0.61.x             (scripts/bench-web-clients.py: iter_study per study)
#
# Interleaved rounds (each tool once per round, so load hits all alike), a fresh output folder per run;
# median wall time per tool, MB/s, the ratio of each px run to the faster Python client, and each tool's
# peak RSS (getrusage of the child: ru_maxrss, median over the rounds). As JSON lines.
# px is built with `swift build -c release --static-swift-stdlib`; the Python clients live in their
# own venv (scripts/setup-bench-env.sh), not in the test venv or CI.
#
# usage: scripts/bench-web.sh [WORKDIR]   (default: bench-data/ in the project)
# env:   PX_BENCH_RUNS (default 7), PX_BENCH_VENV (the clients' venv, default .bench-venv),
#        PX_BENCH_TRASH (a folder to move the downloaded files into)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/bench-data}
runs=${PX_BENCH_RUNS:-7}
python=${PX_VENV:-$root/.venv}/bin/python
bench_python=${PX_BENCH_VENV:-$root/.bench-venv}/bin/python
export TCP_NODELAY=1 LC_ALL=C

mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$root/scripts/bench-common.sh"
PX_BENCH_VENV=${PX_BENCH_VENV:-$root/.bench-venv} bash "$root/scripts/setup-bench-env.sh" >&2
swift build -c release --static-swift-stdlib --product px-get >&2
bin=$(swift build -c release --show-bin-path)

# --- the corpus: ct300 with ten StudyInstanceUIDs (and SeriesInstanceUIDs), 30 instances each
ct=$(bench_ct300 "$work")
web="$work/ct300-10studies"
if [ ! -f "$web/.complete" ]; then
    rm -rf "$web" && mkdir -p "$web"
    "$python" - "$ct" "$web" <<'PY'
import glob, os, sys, pydicom
from pydicom.uid import generate_uid
files = sorted(glob.glob(sys.argv[1] + "/*.dcm"))
for i, path in enumerate(files):
    ds = pydicom.dcmread(path)
    n = i * 10 // len(files)
    ds.StudyInstanceUID = generate_uid(entropy_srcs=["px-bench-web-study", str(n)])
    ds.SeriesInstanceUID = generate_uid(entropy_srcs=["px-bench-web-series", str(n)])
    ds.AccessionNumber = f"WEB{n:03d}"
    ds.save_as(os.path.join(sys.argv[2], os.path.basename(path)), enforce_file_format=True)
PY
    touch "$web/.complete"
fi
bytes=$(cat "$web"/*.dcm | wc -c)

# --- Orthanc with the DICOMweb plugin, loaded with the corpus
orthanc="$work/orthanc-web"
rm -rf "$orthanc" && mkdir -p "$orthanc"
read -r dicom_port http_port < <(PX_ORTHANC_DICOMWEB=1 bash "$root/scripts/orthanc-start.sh" "$orthanc" | tail -1)
trap 'bash "$root/scripts/peer-stop.sh" "$orthanc/orthanc.pid" >/dev/null 2>&1 || true' EXIT
storescu -aec ORTHANC 127.0.0.1 "$dicom_port" "$web"/*.dcm >/dev/null 2>&1
url="http://127.0.0.1:$http_port/dicom-web"
mapfile -t studies < <("$python" - "$web" <<'PY'
import glob, sys, pydicom
print("\n".join(sorted({pydicom.dcmread(p, stop_before_pixels=True).StudyInstanceUID for p in glob.glob(sys.argv[1] + "/*.dcm")})))
PY
)
# px-get's targets: the same ten study UIDs, as a px-find result on stdin.
targets="$work/web-targets.json"
printf '%s\n' "${studies[@]}" | awk 'BEGIN { printf "{\"status\": \"success\", \"data\": [" }
    { printf "%s{\"StudyInstanceUID\": {\"value\": \"%s\"}}", (NR > 1 ? ", " : ""), $1 }
    END { print "]}" }' >"$targets"

# measure OUT CMD...: runs CMD (stdin from $stdin_file), prints "wall_us peak_rss_kib instances".
measure() {
    local out=$1; shift
    "$python" -c '
import os, resource, subprocess, sys, time
out, stdin = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
with open(stdin) as f:
    r = subprocess.run(sys.argv[3:], stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t0
n = sum(len([x for x in files if x.endswith(".dcm") or x[:1].isdigit()]) for _, _, files in os.walk(out))
if r.returncode != 0:
    sys.exit(f"{sys.argv[3]} failed ({r.returncode})")
print(int(wall * 1e6), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, n)
' "$out" "$stdin_file" "$@"
}

tools=("px-get" "px-get --parallel 1" "dicomtrolley" "dicomweb-client")
run_tool() {
    local tool=$1 out=$2
    stdin_file=/dev/null
    case $tool in
    "px-get") stdin_file=$targets measure "$out" "$bin/px-get" "$url" -d "$out" ;;
    "px-get --parallel 1") stdin_file=$targets measure "$out" "$bin/px-get" "$url" -d "$out" --parallel 1 ;;
    *) measure "$out" "$bench_python" "$root/scripts/bench-web-clients.py" "$tool" "$url" "$out" "${studies[@]}" ;;
    esac
}

echo "== WADO-RS: 300 CT instances ($bytes bytes) in ${#studies[@]} studies from Orthanc $url, $runs interleaved rounds" >&2
samples=$(mktemp -d)
for round in $(seq "$runs"); do
    for i in "${!tools[@]}"; do
        out="$work/web-out"
        rm -rf "$out" && mkdir -p "$out"
        line=$(run_tool "${tools[$i]}" "$out")
        read -r us kib n <<<"$line"
        [ "$n" -eq 300 ] || { echo "${tools[$i]} wrote $n files, not 300" >&2; exit 1; }
        echo "$us" >>"$samples/time.$i"
        echo "$kib" >>"$samples/rss.$i"
        if [ -n "${PX_BENCH_TRASH:-}" ]; then mkdir -p "$PX_BENCH_TRASH" && mv "$out" "$PX_BENCH_TRASH/web-$round-$i"; fi
    done
done
rm -rf "$work/web-out"

python_best=
for i in "${!tools[@]}"; do
    median_us=$(median <"$samples/time.$i")
    case ${tools[$i]} in px-get*) ;; *)
        if [ -z "$python_best" ] || [ "$median_us" -lt "$python_best" ]; then python_best=$median_us; fi ;;
    esac
done
for i in "${!tools[@]}"; do
    median_us=$(median <"$samples/time.$i")
    rss=$(median <"$samples/rss.$i")
    awk -v t="${tools[$i]}" -v u="$median_us" -v b="$bytes" -v k="$rss" -v best="$python_best" 'BEGIN {
        printf "{\"tool\": \"%s\", \"instances\": 300, \"median_ms\": %.1f, \"MB_per_s\": %.1f, \"speedup_vs_faster_python\": %.2f, \"peak_rss_MB\": %.1f}\n",
            t, u / 1000, b / u, best / u, k / 1024 }'
done
rm -rf "$samples"
