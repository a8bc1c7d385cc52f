# Sourced by the bench-*.sh scripts (not run alone): the shared CT corpus and helpers.
# Needs $root (the project) and $python (the test venv's python) set by the script.

# bench_ct300 WORKDIR: the 300 x 512x512 16-bit CT corpus (about 158 MB) in WORKDIR/ct300, made once
# by make-qr-corpus.py; prints its path.
bench_ct300() {
    local ct="$1/ct300"
    if [ ! -f "$ct/.complete" ]; then
        rm -rf "$ct" && mkdir -p "$ct"
        "$python" "$root/scripts/make-qr-corpus.py" --ct-bench 300 "$ct" >/dev/null
        touch "$ct/.complete"
    fi
    echo "$ct"
}

# bench_ct10x30 WORKDIR: the 300 CT images regrouped into 10 studies of 30 (StudyInstanceUID / SeriesInstanceUID
# of the corpus with ".1" ... ".10" appended, StudyID 1-10) in WORKDIR/ct10x30, made once; prints its path.
bench_ct10x30() {
    local ct studies="$1/ct10x30"
    ct=$(bench_ct300 "$1")
    if [ ! -f "$studies/.complete" ]; then
        rm -rf "$studies" && mkdir -p "$studies"
        "$python" - "$ct" "$studies" <<'PY'
import sys, glob, os, pydicom
files = sorted(glob.glob(sys.argv[1] + "/*.dcm"))
for index, path in enumerate(files):
    ds = pydicom.dcmread(path)
    group = index // 30
    ds.StudyInstanceUID = f"{ds.StudyInstanceUID}.{group + 1}"
    ds.SeriesInstanceUID = f"{ds.SeriesInstanceUID}.{group + 1}"
    ds.StudyID = str(group + 1)
    ds.save_as(os.path.join(sys.argv[2], os.path.basename(path)), enforce_file_format=True)
PY
        touch "$studies/.complete"
    fi
    echo "$studies"
}

# A free TCP port for a peer, from a block of test ports below the kernel's ephemeral range, taken here
# for the whole run (scripts/test-ports.sh): a port from a bind to port 0 can be taken by any outgoing
# connection before the peer binds it.
source "$root/scripts/test-ports.sh"
px_take_port_block
free_port() { px_free_ports 1; }

# The median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# time_us CMD...: the wall time of CMD in microseconds (its output discarded).
time_us() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); }

# ratio A B: A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# ms MICROSECONDS: the same in milliseconds with two decimals.
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

# time_ms CMD...: the wall time of CMD in milliseconds, with stdin from /dev/null (px-sync reads a px-find
# result from a stdin that is not a terminal) and its output in $work/last-run.out; a failure ends the script.
time_ms() {
    local t0 t1 status=0
    t0=$(date +%s%N)
    "$@" </dev/null >"$work/last-run.out" 2>&1 || status=$?
    t1=$(date +%s%N)
    [ "$status" = 0 ] || { echo "failed ($status): $* (output: $work/last-run.out)" >&2; tail -3 "$work/last-run.out" >&2; exit 1; }
    echo $(( (t1 - t0) / 1000000 ))
}

# time_us_checked CMD...: the wall time of CMD in microseconds, stdin from /dev/null, its output in
# $work/last-run.out; a failure ends the script (time_us above ignores the status).
time_us_checked() {
    local t0 t1 status=0
    t0=$(date +%s%N)
    "$@" </dev/null >"$work/last-run.out" 2>&1 || status=$?
    t1=$(date +%s%N)
    [ "$status" = 0 ] || { echo "failed ($status): $* (output: $work/last-run.out)" >&2; tail -3 "$work/last-run.out" >&2; exit 1; }
    echo $(( (t1 - t0) / 1000 ))
}

# peak_rss_kib CMD...: runs CMD (stdin /dev/null, output discarded), prints its peak RSS in KiB (getrusage
# RUSAGE_CHILDREN ru_maxrss of the child, as bench-web.sh measures); a failure ends the script.
peak_rss_kib() {
    "$python" -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode != 0:
    sys.exit(f"{sys.argv[1]} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$@" || exit 1
}

# wait_echo AET PORT [PID]: until a C-ECHO to AET at 127.0.0.1:PORT succeeds (at most ~10 s; PID, when given,
# must stay alive); returns 1 if it never does.
wait_echo() {
    local i
    for i in $(seq 100); do
        [ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || return 1
        echoscu -to 1 -aec "$1" 127.0.0.1 "$2" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# bench_ct_sets WORKDIR SMALL LARGE SERIES: from the 300-image CT corpus, two studies with UIDs of their own
# in WORKDIR/ct-sets-SMALL-LARGE-SERIES/: web-SMALL and web-LARGE (SMALL and LARGE images in SERIES series each,
# so a retrieve split by series runs as many side by side at both sizes), find-SMALL and find-LARGE (the same images without pixel data, in one series: dcmqrscp answers an
# image-level query only below one series). Beside each folder: NAME.study, NAME.series (its series UIDs).
# SMALL + LARGE <= 300. Made once; prints the folder.
bench_ct_sets() {
    local ct sets="$1/ct-sets-$2-$3-$4"
    ct=$(bench_ct300 "$1")
    if [ ! -f "$sets/.complete" ]; then
        rm -rf "$sets" && mkdir -p "$sets"
        "$python" - "$ct" "$sets" "$2" "$3" "$4" <<'PY'
import glob, os, sys, pydicom
from pydicom.uid import generate_uid
source, out, small, large, nseries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
files = sorted(glob.glob(source + "/*.dcm"))
assert small + large <= len(files)
for n, chunk in ((small, files[:small]), (large, files[small:small + large])):
    for kind in ("web", "find"):
        name = f"{kind}-{n}"
        os.makedirs(f"{out}/{name}")
        study = generate_uid(entropy_srcs=["px-bench-sets", name])
        series = set()
        for i, path in enumerate(chunk):
            ds = pydicom.dcmread(path, stop_before_pixels=(kind == "find"))
            group = i * nseries // n if kind == "web" else 0
            ds.StudyInstanceUID = study
            ds.SeriesInstanceUID = generate_uid(entropy_srcs=["px-bench-sets-series", name, str(group)])
            ds.SOPInstanceUID = generate_uid(entropy_srcs=["px-bench-sets", name, str(i)])
            ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
            ds.PatientID, ds.StudyID, ds.AccessionNumber = f"PXSET{n}", str(n), f"SET{n}"
            ds.SeriesNumber, ds.InstanceNumber = group + 1, i + 1
            series.add(ds.SeriesInstanceUID)
            ds.save_as(f"{out}/{name}/{i:05d}.dcm", enforce_file_format=True)
        with open(f"{out}/{name}.study", "w") as f:
            f.write(study + "\n")
        with open(f"{out}/{name}.series", "w") as f:
            f.write("\n".join(sorted(series)) + "\n")
PY
        touch "$sets/.complete"
    fi
    echo "$sets"
}
