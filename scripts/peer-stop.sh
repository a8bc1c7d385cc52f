#!/usr/bin/env bash
# peer-stop.sh - stop a background test peer started by dcmqrscp-start.sh / orthanc-start.sh.
#
# Usage: scripts/peer-stop.sh PIDFILE
#
# Sends SIGTERM to the PID in PIDFILE (to its whole process group when it leads one, so that
# forked association children of dcmqrscp go too), waits up to 5 s, then sends SIGKILL.
# Removes PIDFILE afterwards. A missing PIDFILE or an already dead process is not an error.
set -euo pipefail

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
}
if [[ $# -ne 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    usage >&2
    exit 2
fi
pidfile=$1

if [[ ! -e "$pidfile" ]]; then
    echo "peer-stop.sh: no pidfile $pidfile; nothing to stop" >&2
    exit 0
fi
pid=$(tr -d '[:space:]' <"$pidfile")
if [[ ! "$pid" =~ ^[0-9]+$ ]] || ((pid <= 1)); then
    echo "peer-stop.sh: $pidfile does not hold a PID" >&2
    exit 1
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

if alive; then
    kill -TERM -- "$target" 2>/dev/null || true
    for _ in $(seq 1 50); do
        alive || break
        sleep 0.1
    done
    if alive; then
        echo "peer-stop.sh: $pid still running after 5 s, sending SIGKILL" >&2
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
