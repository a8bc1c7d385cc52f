#!/usr/bin/env bash
# The venv of the DICOMweb benchmark (scripts/bench-web.sh), apart from the test venv and not used by CI:
# the clients px is compared with, from PyPI at the versions issue 13 names.
#
#   dicomtrolley 4.1.0      (QIDO-RS search, WADO-RS download, several workers)
#   dicomweb-client 0.61.x  (the DICOMweb client of the highdicom/Slim projects)
#
# usage: scripts/setup-bench-env.sh        env: PX_BENCH_VENV (default: <project root>/.bench-venv),
#                                                PX_PYTHON (default: python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${PX_BENCH_VENV:-$root/.bench-venv}
pins=("dicomtrolley==4.1.0" "dicomweb-client>=0.61,<0.62")
if [[ ! -x "$venv/bin/python" ]]; then
    "${PX_PYTHON:-python3}" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import dicomtrolley, dicomweb_client' 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("bench venv:", ", ".join(p + " " + m.version(p) for p in ("dicomtrolley", "dicomweb-client", "pydicom", "requests")))'
