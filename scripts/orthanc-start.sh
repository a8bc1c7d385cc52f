#!/usr/bin/env bash
# orthanc-start.sh - start Orthanc by hand as a background DICOM test peer (never the service).
#
# Usage: scripts/orthanc-start.sh WORKDIR [DICOM_PORT] [HTTP_PORT]
#
# Writes WORKDIR/orthanc.json (AE title ORTHANC, storage WORKDIR/db, no plugins,
# DefaultEncoding Utf8, DicomAlwaysAllow{Echo,Store,Find,Move,Get}, DicomAssociationCloseDelay 0,
# HTTP restricted to localhost without authentication), starts `Orthanc WORKDIR/orthanc.json`
# with TCP_NODELAY=1, appends its log to WORKDIR/orthanc.log, waits (max ~30 s) until
# GET http://127.0.0.1:HTTP_PORT/system answers and DICOM_PORT accepts a connection, writes the PID to WORKDIR/orthanc.pid and
# "DICOM_PORT HTTP_PORT" to WORKDIR/orthanc.ports, and prints "DICOM_PORT HTTP_PORT" on stdout.
# Ports that are omitted are picked free from a block of test ports below the kernel's ephemeral range
# (px_free_ports in scripts/lib.sh, the scheme of the Swift tests' ports); when Orthanc then finds one
# of them in use after all, it is started again on new ones (up to 3 times). If an Orthanc from an
# earlier call is still running for WORKDIR (and given ports match), its ports are printed again.
# Note: Orthanc's DICOM port binds all interfaces (no bind-address option); use 127.0.0.1.
# Stop it with: scripts/peer-stop.sh WORKDIR/orthanc.pid
#
# Environment:
#   PX_ORTHANC_MODALITIES  DicomModalities: "name=AE@host:port,name2=AE2@host:port"
#                          (C-MOVE destinations must be listed; port 0 is not allowed)
#   PX_ORTHANC_AET         Orthanc's AE title (default ORTHANC)
#   PX_ORTHANC_DICOMWEB    1: load the DICOMweb plugin (Debian package orthanc-dicomweb) and
#                          answer QIDO-RS/WADO-RS/STOW-RS at http://127.0.0.1:HTTP_PORT/dicom-web/
#                          (same HTTP port, so the printed ports are unchanged)
#   PX_ORTHANC_DICOMWEB_PLUGIN  the plugin's path (default: the package's versionless link,
#                               /usr/share/orthanc/plugins/libOrthancDicomWeb.so)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
px_args 1 3 "$@"
px_need_tools "orthanc python3" Orthanc python3

mkdir -p "$1"
workdir=$(cd "$1" && pwd)
cfg=$workdir/orthanc.json
log=$workdir/orthanc.log
pidfile=$workdir/orthanc.pid
portsfile=$workdir/orthanc.ports

# ---- already running? ----------------------------------------------------------------------
if [[ -s "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    read -r old_dicom old_http <"$portsfile" || true
    if [[ $# -ge 2 && "$2" != "${old_dicom:-}" ]] || [[ $# -ge 3 && "$3" != "${old_http:-}" ]]; then
        die "already running (pid $(cat "$pidfile"), ports ${old_dicom:-?} ${old_http:-?});" \
            "stop it first: scripts/peer-stop.sh $pidfile"
    fi
    echo "$old_dicom $old_http"
    exit 0
fi

check_port() {
    if [[ ! "$1" =~ ^[0-9]+$ ]] || (($1 < 1 || $1 > 65535)); then
        die "bad port: $1"
    fi
}
picked=0 # ports picked here (not given), so they may be picked again when Orthanc cannot bind one
given_dicom=${2:-}
given_http=${3:-}
pick_ports() {
    local free1 free2
    read -r free1 free2 < <(px_free_ports 2)
    dicom_port=${given_dicom:-$free1}
    http_port=${given_http:-$free2}
    if [[ "$http_port" == "$dicom_port" ]]; then
        http_port=$free1
    fi
}
dicom_port=$given_dicom
http_port=$given_http
if [[ -z "$given_dicom" || -z "$given_http" ]]; then
    px_take_port_block # in this shell, so held until Orthanc has bound the ports
    picked=1
    pick_ports
fi
check_port "$dicom_port"
check_port "$http_port"
[[ "$dicom_port" != "$http_port" ]] || die "DICOM and HTTP port must differ"

dicomweb_plugin=""
if [[ "${PX_ORTHANC_DICOMWEB:-0}" == "1" ]]; then
    dicomweb_plugin=${PX_ORTHANC_DICOMWEB_PLUGIN:-/usr/share/orthanc/plugins/libOrthancDicomWeb.so}
    [[ -r "$dicomweb_plugin" ]] || die "DICOMweb plugin $dicomweb_plugin not found;" \
        "install with scripts/setup-test-env.sh (or: apt-get install -y orthanc-dicomweb)"
fi

# ---- configuration (JSON written by python3 for correct quoting) ------------------------------
mkdir -p "$workdir/db"
write_config() {
    PX_CFG=$cfg PX_DB=$workdir/db PX_DICOM_PORT=$dicom_port PX_HTTP_PORT=$http_port \
        PX_DICOMWEB_PLUGIN=$dicomweb_plugin python3 - <<'PY'
import json
import os
import re
import sys

modalities = {}
spec = os.environ.get("PX_ORTHANC_MODALITIES", "")
for entry in filter(None, (e.strip() for e in spec.split(","))):
    m = re.fullmatch(r"([^=]+)=([^@]+)@([^:]+):(\d+)", entry)
    if not m:
        sys.exit(f"orthanc-start.sh: bad PX_ORTHANC_MODALITIES entry {entry!r} "
                 "(expected name=AE@host:port)")
    port = int(m.group(4))
    if not 1 <= port <= 65535:
        sys.exit(f"orthanc-start.sh: port of {entry!r} must be 1..65535 (Orthanc refuses 0)")
    modalities[m.group(1)] = [m.group(2), m.group(3), port]

db = os.environ["PX_DB"]
cfg = {
    "Name": "px-test-orthanc",
    "StorageDirectory": db,
    "IndexDirectory": db,
    "StorageCompression": False,
    "MaximumStorageSize": 0,
    "MaximumPatientCount": 0,
    "Plugins": [],
    "ConcurrentJobs": 2,
    "HttpServerEnabled": True,
    "HttpPort": int(os.environ["PX_HTTP_PORT"]),
    "RemoteAccessAllowed": False,
    "AuthenticationEnabled": False,
    "HttpCompressionEnabled": False,
    "DicomServerEnabled": True,
    "DicomAet": os.environ.get("PX_ORTHANC_AET", "ORTHANC"),
    "DicomPort": int(os.environ["PX_DICOM_PORT"]),
    "DicomCheckCalledAet": False,
    "DefaultEncoding": "Utf8",
    "DicomAlwaysAllowEcho": True,
    "DicomAlwaysAllowStore": True,
    "DicomAlwaysAllowFind": True,
    "DicomAlwaysAllowMove": True,
    "DicomAlwaysAllowGet": True,
    "DicomCheckModalityHost": False,
    "DicomModalities": modalities,
    "DicomModalitiesInDatabase": False,
    "DicomScuTimeout": 30,
    "DicomScpTimeout": 30,
    "DicomAssociationCloseDelay": 0,
    "DicomThreadsCount": 4,
    "SynchronousCMove": True,
    "LimitFindResults": 0,
    "LimitFindInstances": 0,
    "StorageAccessOnFind": "Always",
    "SaveJobs": False,
    "JobsHistorySize": 10,
    "OverwriteInstances": False,
    "StableAge": 60,
    "MetricsEnabled": False,
    "ExecuteLuaEnabled": False,
    "DeidentifyLogs": True,
}
plugin = os.environ.get("PX_DICOMWEB_PLUGIN", "")
if plugin:
    cfg["Plugins"] = [plugin]
    cfg["DicomWeb"] = {"Enable": True, "Root": "/dicom-web/", "EnableWado": True, "Ssl": False}
with open(os.environ["PX_CFG"], "w", encoding="utf-8") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
PY
}

# ---- start -----------------------------------------------------------------------------------
# Ready when both servers are: the REST API answers and the DICOM port accepts a connection (under load
# the HTTP server has been up before the DICOM one, and a peer loaded at once was refused).
answers() {
    python3 - "$http_port" "$dicom_port" <<'PY' 2>/dev/null
import socket
import sys
import urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/system", timeout=1) as r:
    if r.status != 200:
        sys.exit(1)
socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=1).close()
PY
}
for attempt in 1 2 3; do
    write_config || die "could not write $cfg"
    log_start=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))
    # setsid: own session/process group so it outlives the calling job; by hand, never the service.
    # px_without_port_lock: Orthanc must not keep the block of test ports taken while it runs.
    (
        px_without_port_lock
        TCP_NODELAY=1 exec setsid Orthanc "$cfg"
    ) >>"$log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$pidfile"
    echo "$dicom_port $http_port" >"$portsfile"
    px_wait_for "$pid" 150 answers && break
    # A port picked free here was taken before Orthanc bound it: start again on new ones.
    if ((picked && attempt < 3)) && ! kill -0 "$pid" 2>/dev/null &&
        tail -c "+$log_start" "$log" | grep -q "privileged or already in use"; then
        echo "$px_script: port $dicom_port or $http_port in use after all; trying other ports" >&2
        pick_ports
        continue
    fi
    px_start_failed "$pid" "$log" "Orthanc did not answer http://127.0.0.1:$http_port/system" "$pidfile" "$portsfile"
done
echo "$dicom_port $http_port"
