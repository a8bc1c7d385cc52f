#!/usr/bin/env bash
# peer-stop.sh - stop a background test peer started by dcmqrscp-start.sh / orthanc-start.sh.
#
# Usage: scripts/peer-stop.sh PIDFILE
#
# Sends SIGTERM to the PID in PIDFILE (to its whole process group when it leads one, so that
# forked association children of dcmqrscp go too), waits up to 5 s, then sends SIGKILL.
# Removes PIDFILE afterwards. A missing PIDFILE or an already dead process is not an error.
# Environment: PX_STOP_TIMEOUT seconds to wait before SIGKILL (default 5; Orthanc needs ~4 s
# to shut down gracefully, dcmqrscp ~1 s).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
px_args 1 1 "$@"
pidfile=$1

if [[ ! -e "$pidfile" ]]; then
    echo "peer-stop.sh: no pidfile $pidfile; nothing to stop" >&2
    exit 0
fi
pid=$(tr -d '[:space:]' <"$pidfile")
if [[ ! "$pid" =~ ^[0-9]+$ ]] || ((pid <= 1)); then
    die "$pidfile does not hold a PID"
fi

# signal the process group when the peer leads one (setsid'd by the start scripts)
target=$pid
pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ' || true)
if [[ "$pgid" == "$pid" ]]; then
    target=-$pid
fi

alive() {
    kill -0 -- "$target" 2>/dev/null
}

timeout=${PX_STOP_TIMEOUT:-5}
[[ "$timeout" =~ ^[0-9]+$ ]] || { echo "peer-stop.sh: bad PX_STOP_TIMEOUT: $timeout" >&2; exit 2; }
if alive; then
    kill -TERM -- "$target" 2>/dev/null || true
    for _ in $(seq 1 $((timeout * 10))); do
        alive || break
        sleep 0.1
    done
    if alive; then
        echo "peer-stop.sh: $pid still running after $timeout s, sending SIGKILL" >&2
        kill -KILL -- "$target" 2>/dev/null || true
        for _ in $(seq 1 20); do
            alive || break
            sleep 0.1
        done
    fi
fi
rm -f "$pidfile"
if alive; then
    echo "peer-stop.sh: could not stop $pid" >&2
    exit 1
fi
