#!/usr/bin/env bash
# setup-test-env.sh - install what px's test suite needs on a fresh Debian 12 machine.
#
# Usage: scripts/setup-test-env.sh
#
#   1. apt packages: dcmtk orthanc orthanc-dicomweb zlib1g-dev python3 python3-venv
#      (one `apt-get update`, then a non-interactive install; apt is skipped when all are present)
#   2. makes sure Orthanc's system service is not running (tests start Orthanc by hand)
#   3. a Python venv with pinned pydicom + pynetdicom, pypx and dicomsync from PyPI
#
# Environment:
#   PX_VENV     venv location (default: <project root>/.venv)
#   PX_PYTHON   interpreter used to create the venv (default: python3)
# Idempotent: a second run changes nothing and needs no network.
# Must run as root to install packages (CI does); without root it only reports what is missing.
set -euo pipefail

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
if [[ $# -gt 0 ]]; then
    usage >&2
    [[ "$1" == "-h" || "$1" == "--help" ]] && exit 0
    exit 2
fi

PYDICOM_VERSION=3.0.2
PYNETDICOM_VERSION=3.0.4
# The tools px is compared with, run beside it by the habit and zip tests (issues 21, 23): pypx's
# px-report reads px-find's JSON; dicomsync reads px's zips and writes the zips px reads.
PYPX_VERSION=3.12.6
DICOMSYNC_VERSION=1.3.0
APT_PACKAGES=(dcmtk orthanc orthanc-dicomweb zlib1g-dev python3 python3-venv openssl libsqlite3-dev)  # openssl: the TLS tests make their certificates
APT_PACKAGES+=(unzip zip)  # zip place tests: unzip -t checks our archives; zip writes Info-ZIP ones for our reader

root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${PX_VENV:-$root_dir/.venv}
python=${PX_PYTHON:-python3}

log() { echo "setup-test-env: $*" >&2; }
is_root() { [[ $(id -u) -eq 0 ]]; }

# ---- 1. apt packages ----------------------------------------------------------------------
installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for pkg in "${APT_PACKAGES[@]}"; do
        installed "$pkg" || missing+=("$pkg")
    done
else
    log "dpkg-query not found: not a Debian system? skipping apt step"
fi
if ((${#missing[@]})); then
    if ! is_root; then
        log "missing packages: ${missing[*]}"
        log "install them as root with:"
        log "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
        exit 1
    fi
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    log "apt packages already present: ${APT_PACKAGES[*]}"
fi

# ---- 2. Orthanc system service must not run ------------------------------------------------
stop_orthanc_service() {
    if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; then
        systemctl stop orthanc.service >/dev/null 2>&1 || true
        systemctl disable orthanc.service >/dev/null 2>&1 || true
    fi
    if command -v service >/dev/null 2>&1 && [[ -x /etc/init.d/orthanc ]]; then
        service orthanc stop >/dev/null 2>&1 || true
    elif [[ -x /etc/init.d/orthanc ]]; then
        /etc/init.d/orthanc stop >/dev/null 2>&1 || true
    fi
}
if installed orthanc 2>/dev/null; then
    if is_root; then
        stop_orthanc_service
    fi
    # The packaged service runs "/usr/sbin/Orthanc ... /etc/orthanc/"; report it if still there.
    if [[ -s /run/orthanc.pid ]] && kill -0 "$(cat /run/orthanc.pid)" 2>/dev/null; then
        if is_root; then
            log "Orthanc system service still running (pid $(cat /run/orthanc.pid)); stop it by hand"
        else
            log "Orthanc system service is running; stop it with: service orthanc stop (as root)"
        fi
        exit 1
    fi
    log "Orthanc system service is not running"
fi

# ---- 3. Python venv with pydicom + pynetdicom ----------------------------------------------
if ! command -v "$python" >/dev/null 2>&1; then
    log "$python not found; install with: apt-get install -y python3 python3-venv"
    exit 1
fi
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating venv $venv"
    if ! "$python" -m venv "$venv"; then
        rm -rf "$venv"
        log "could not create a venv; install with: apt-get install -y python3-venv"
        exit 1
    fi
fi
# keep the venv out of git even though the project's .gitignore does not list it
[[ -e "$venv/.gitignore" ]] || echo '*' >"$venv/.gitignore"

have_pins() {
    "$venv/bin/python" - "$PYDICOM_VERSION" "$PYNETDICOM_VERSION" "$PYPX_VERSION" "$DICOMSYNC_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
names = ("pydicom", "pynetdicom", "pypx", "dicomsync")
sys.exit(0 if tuple(version(n) for n in names) == tuple(sys.argv[1:5]) else 1)
PY
}
if have_pins; then
    log "pydicom $PYDICOM_VERSION, pynetdicom $PYNETDICOM_VERSION, pypx $PYPX_VERSION and dicomsync $DICOMSYNC_VERSION already in $venv"
else
    log "installing pydicom==$PYDICOM_VERSION pynetdicom==$PYNETDICOM_VERSION pypx==$PYPX_VERSION dicomsync==$DICOMSYNC_VERSION into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        "pydicom==$PYDICOM_VERSION" "pynetdicom==$PYNETDICOM_VERSION" \
        "pypx==$PYPX_VERSION" "dicomsync==$DICOMSYNC_VERSION"
    have_pins || { log "pinned versions not importable after install"; exit 1; }
fi

# ---- summary --------------------------------------------------------------------------------
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }
pyver=$("$venv/bin/python" -c 'import platform; print(platform.python_version())')
echo "setup-test-env: dcmtk $(pkg_version dcmtk), orthanc $(pkg_version orthanc)," \
    "orthanc-dicomweb $(pkg_version orthanc-dicomweb)," \
    "zlib1g-dev $(pkg_version zlib1g-dev), python $pyver, pydicom $PYDICOM_VERSION," \
    "pynetdicom $PYNETDICOM_VERSION, pypx $PYPX_VERSION, dicomsync $DICOMSYNC_VERSION, venv $venv"
