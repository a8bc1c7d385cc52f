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
