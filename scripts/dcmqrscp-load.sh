#!/usr/bin/env bash
# dcmqrscp-load.sh - store DICOM files into a dcmqrscp started by dcmqrscp-start.sh.
#
# Usage: scripts/dcmqrscp-load.sh WORKDIR FILE|DIR...
#
# Sends every argument with storescu (TCP_NODELAY=1, -aec QRSCP, +sd +r: directories are
# scanned recursively) to 127.0.0.1 on the port in WORKDIR/dcmqrscp.port. In directories only
# files that DCMTK recognises as DICOM (dcmftest) are sent, so index.json / MANIFEST.tsv
# beside a corpus are skipped. Storing the same SOP Instance again replaces it (idempotent).
# Note: dcmqrscp 3.6.7 accepts only uncompressed transfer syntaxes (implicit/explicit LE,
# explicit BE, deflated); JPEG/RLE files (e.g. make-corpus.sh's *-jpeg-*/*-rle.dcm) are refused
# and storescu then stops with an error.
# Environment: PX_QR_AET called AE title (default QRSCP).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
px_args 2 "" "$@"
px_need_tools dcmtk storescu dcmftest

workdir=$1
shift
portfile=$workdir/dcmqrscp.port
[[ -s "$portfile" ]] || die "no $portfile; start with dcmqrscp-start.sh"
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
        die "no such file or directory: $arg"
    fi
done
count=$(wc -l <"$list")
if ((count == 0)); then
    die "no DICOM files found in: $*"
fi

# one storescu association per 500 files (keeps argument lists short for big corpora)
if ! xargs -d '\n' -n 500 env TCP_NODELAY=1 storescu -q +sd +r -aec "$aet" 127.0.0.1 "$port" <"$list"; then
    die "storescu failed (see messages above)"
fi
echo "dcmqrscp-load.sh: stored $count files into $aet at 127.0.0.1:$port" >&2
