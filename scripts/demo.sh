#!/usr/bin/env bash
# make demo: build px, make sample data with DCMTK's own tools, and show px reading it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work="$root/demo-data"
rm -rf "$work" && mkdir -p "$work"

echo "== building px" >&2
swift build --product px-dump >&2
bin=$(swift build --show-bin-path)

echo "== sample files made by DCMTK (scripts/make-corpus.sh)" >&2
bash scripts/make-corpus.sh "$work/corpus" >&2

echo "== px-dump: a Latin-1 file as DICOM JSON (text decoded to UTF-8)" >&2
"$bin/px-dump" "$work/corpus/latin1-explicit-le.dcm"
echo "== px-dump --format pypx: ISO 2022 Japanese, as pypx's entries" >&2
"$bin/px-dump" --format pypx --compact "$work/corpus/iso2022-jp-explicit-le.dcm"
echo "== px-dump on a file that is not DICOM: JSON error, exit 1" >&2
"$bin/px-dump" --compact /etc/hostname || echo "(exit $?)" >&2
