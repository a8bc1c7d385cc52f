#!/usr/bin/env bash
# make demo without DCMTK (or with PX_DEMO_PEER=serve): the main job end to end with px-serve as the PACS.
#
#   1. builds px and generates the small sample archive (4 patients, Latin-1/UTF-8/Japanese names);
#   2. starts px-serve over a folder place holding it (AE PXSERVE) and px-listen as the C-MOVE destination;
#   3. runs px-echo, px-find, `px-find | px-move`, `px-find | px-get` and px-push (back into the place, where
#      px-serve records it and the next query finds it), all on the native backend; then px-ls on the place;
#   4. shows the JSON, the NDJSON events and the received tree, then stops the servers.
#
# Needs the Python venv (`make setup`). The data stays in demo-data/ for a look afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work="$root/demo-data"
python="${PX_VENV:-$root/.venv}/bin/python"
if [ ! -x "$python" ]; then
    echo "demo: no Python venv at $python. Run: make setup" >&2
    exit 1
fi

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
# A free TCP port for a peer, from a block of test ports below the kernel's ephemeral range, taken here
# for the whole run (scripts/test-ports.sh).
source "$root/scripts/test-ports.sh"
px_take_port_block
free_port() { px_free_ports 1; }
# Waits (up to 10 s) for a line with "event":"listening" in an NDJSON file and prints its port.
listening_port() {
    for _ in $(seq 100); do
        line=$(grep -m1 '"event":"listening"' "$1" 2>/dev/null || true)
        if [ -n "$line" ]; then
            "$python" -c 'import json,sys; print(json.loads(sys.argv[1])["port"])' "$line"
            return
        fi
        sleep 0.1
    done
    echo "demo: no listening event in $1" >&2
    exit 1
}

say "building px"
swift build >&2
bin=$(swift build --show-bin-path)
export PATH="$bin:$PATH"

rm -rf "$work" && mkdir -p "$work"
say "sample archive: scripts/make-qr-corpus.py, as a folder place"
"$python" scripts/make-qr-corpus.py "$work/place" >&2

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    return 0
}
trap cleanup EXIT

listen_port=$(free_port)
say "starting px-listen (AE PXLISTEN, port $listen_port) into demo-data/received"
px-listen --port "$listen_port" --aet PXLISTEN -d "$work/received" >"$work/events.ndjson" 2>"$work/listen.log" &
pids+=($!)
say "starting px-serve over demo-data/place (AE PXSERVE, any free port)"
px-serve "$work/place" --port 0 --aet PXSERVE --move-destination "PXLISTEN=127.0.0.1:$listen_port" \
    >"$work/serve.ndjson" 2>"$work/serve.log" &
pids+=($!)
port=$(listening_port "$work/serve.ndjson")
listening_port "$work/events.ndjson" >/dev/null
peer="PXSERVE@127.0.0.1:$port"
head -1 "$work/serve.ndjson"

say "px-echo $peer"
px-echo "$peer" --backend native --pretty

say "px-find $peer --PatientName 'M*'  (pypx 3.x shape: studies with their series)"
px-find "$peer" --PatientName 'M*' --backend native --pretty

say "px-find --level study --format table"
px-find "$peer" --level study --format table --backend native

say "px-find --PatientID PAT001 | px-move --destination PXLISTEN"
px-find "$peer" --PatientID PAT001 --backend native | px-move "$peer" --destination PXLISTEN --backend native --pretty

say "px-find --PatientID PAT002 | px-get  (C-GET: the instances come back on the same association)"
px-find "$peer" --PatientID PAT002 --backend native | px-get "$peer" -d "$work/got" --backend native --pretty
(cd "$work/got" && find . -type f | sort)

say "px-listen's events (NDJSON)"
cat "$work/events.ndjson"

say "px-push demo-data/got back to px-serve (C-STORE into the place; a file already there is kept)"
px-push "$peer" "$work/got" --backend native --pretty

say "px-ls demo-data/place --level study --format table  (the place's index, as px-find shows a node)"
px-ls "$work/place" --level study --format table
