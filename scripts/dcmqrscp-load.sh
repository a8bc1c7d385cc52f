#!/usr/bin/env bash
# dcmqrscp-load.sh - store DICOM files into a dcmqrscp started by dcmqrscp-start.sh.
#
# Usage: scripts/dcmqrscp-load.sh WORKDIR FILE|DIR...
#
# Sends every argument with storescu (TCP_NODELAY=1, -aec QRSCP, +sd +r: directories are
# scanned recursively) to 127.0.0.1 on the port in WORKDIR/dcmqrscp.port. In directories only
# files that DCMTK recognises as DICOM (dcmftest) are sent, so index.json / MANIFEST.tsv
# beside a corpus are skipped. Storing the same SOP Instance again replaces it (idempotent).
# Environment: PX_QR_AET called AE title (default QRSCP).
set -euo pipefail

usage() {
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
}
if [[ $# -lt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
    usage >&2
    exit 2
fi
for tool in storescu dcmftest; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "dcmqrscp-load.sh: $tool not found; install with scripts/setup-test-env.sh" \
            "(or: apt-get install -y dcmtk)" >&2
        exit 1
    fi
done

workdir=$1
shift
portfile=$workdir/dcmqrscp.port
[[ -s "$portfile" ]] || { echo "dcmqrscp-load.sh: no $portfile; start with dcmqrscp-start.sh" >&2; exit 1; }
port=$(cat "$portfile")
aet=${PX_QR_AET:-QRSCP}

list=$(mktemp "${TMPDIR:-/tmp}/px-qrload.XXXXXX")
trap 'rm -f "$list"' EXIT
for arg in "$@"; do
    if [[ -d "$arg" ]]; then
        find "$arg" -type f -print0 | sort -z | while IFS= read -r -d '' f; do
            if dcmftest "$f" >/dev/null 2>&1; then printf '%s\n' "$f"; fi
        done >>"$list"
    elif [[ -f "$arg" ]]; then
        printf '%s\n' "$arg" >>"$list"
    else
        echo "dcmqrscp-load.sh: no such file or directory: $arg" >&2
        exit 1
    fi
done
count=$(wc -l <"$list")
if ((count == 0)); then
    echo "dcmqrscp-load.sh: no DICOM files found in: $*" >&2
    exit 1
fi

# one storescu association per 500 files (keeps argument lists short for big corpora)
if ! xargs -d '\n' -n 500 env TCP_NODELAY=1 storescu -q +sd +r -aec "$aet" 127.0.0.1 "$port" <"$list"; then
    echo "dcmqrscp-load.sh: storescu failed (see messages above)" >&2
    exit 1
fi
echo "dcmqrscp-load.sh: stored $count files into $aet at 127.0.0.1:$port" >&2
