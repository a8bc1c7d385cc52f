#!/usr/bin/env bash
# make demo: the main job end to end against an embedded default peer, on free loopback ports.
#
#   1. builds px and generates a small sample archive (4 patients, Latin-1/UTF-8/Japanese names);
#   2. starts DCMTK's dcmqrscp as the PACS and px-listen as the C-MOVE destination;
#   3. runs px-echo, px-find and `px-find | px-move`, on the DCMTK backend and on the native one,
#      then `px-find | px-get` (C-GET) and px-push (C-STORE) back to px-listen;
#   4. shows the JSON, the listener's NDJSON events and the received pypx tree, then stops the peers.
#
# Needs DCMTK and the Python venv (`make setup` installs both; as root it uses apt-get).
# The data stays in demo-data/ for a look afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work="$root/demo-data"
python="${PX_VENV:-$root/.venv}/bin/python"

for tool in dcmqrscp storescu echoscu findscu movescu; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "demo: $tool not found. Install DCMTK: sudo apt-get install -y dcmtk (or run: make setup)" >&2
        exit 1
    fi
done
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

say "building px"
swift build >&2
bin=$(swift build --show-bin-path)
export PATH="$bin:$PATH"

rm -rf "$work" && mkdir -p "$work"
say "sample archive: scripts/make-qr-corpus.py"
"$python" scripts/make-qr-corpus.py "$work/corpus" >&2

listen_port=$(free_port)
listener_pid=""
cleanup() {
    [ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null && wait "$listener_pid" 2>/dev/null
    bash scripts/peer-stop.sh "$work/qr/dcmqrscp.pid" >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "starting dcmqrscp (AE QRSCP) and loading the archive"
qr_port=$(PX_QR_DESTS="PXLISTEN=127.0.0.1:$listen_port" bash scripts/dcmqrscp-start.sh "$work/qr")
bash scripts/dcmqrscp-load.sh "$work/qr" "$work/corpus" >&2
peer="QRSCP@127.0.0.1:$qr_port"

say "starting px-listen (AE PXLISTEN, port $listen_port) into demo-data/received"
px-listen --port "$listen_port" --aet PXLISTEN -d "$work/received" >"$work/events.ndjson" 2>"$work/listen.log" &
listener_pid=$!
for _ in $(seq 50); do
    px-echo "PXLISTEN@127.0.0.1:$listen_port" >/dev/null 2>&1 && break
    sleep 0.1
done

say "px-echo $peer  (DCMTK backend, then native)"
px-echo "$peer" --backend dcmtk --pretty
px-echo "$peer" --backend native --pretty

say "px-echo to a port nobody listens on: a JSON error and exit 1"
px-echo "127.0.0.1:$(free_port)" --pretty || echo "(exit $?)" >&2

say "px-find $peer --PatientName 'M*'  (pypx 3.x shape: studies with their series)"
px-find "$peer" --PatientName 'M*' --pretty

say "px-find --level image --format ndjson  (one line per match, native backend)"
px-find "$peer" --level image --format ndjson --backend native

say "px-find --format table"
px-find "$peer" --level study --format table

say "the same query on both backends gives the same JSON"
# Only the envelope's backend differs (pypx's "command" is the same findscu line on both backends; an argv
# array, in the other formats, names the backend too).
same() { sed -e 's/"backend":"[a-z]*",//' -e 's/"command":\[[^]]*\],//'; }
a=$(px-find "$peer" --backend dcmtk | same)
b=$(px-find "$peer" --backend native | same)
if [ "$a" = "$b" ]; then echo "identical (${#a} bytes)" >&2; else echo "DIFFERENT" >&2; exit 1; fi

say "px-find --PatientID PAT001 | px-move --destination PXLISTEN"
px-find "$peer" --PatientID PAT001 | px-move "$peer" --destination PXLISTEN --pretty

say "patients PAT002..PAT004, moved on the native backend"
for pid in PAT002 PAT003 PAT004; do
    px-find "$peer" --PatientID "$pid" | px-move "$peer" --destination PXLISTEN --backend native
done
sleep 0.5

say "px-listen's events (NDJSON, one per line)"
cat "$work/events.ndjson"

say "the received tree (pypx layout)"
(cd "$work/received" && find . -type f | sort)

say "px-dump --format text --header-only on a received file"
first=$(find "$work/received" -name '*.dcm' | sort | head -1)
px-dump --format text --header-only "$first"

say "px-find --PatientID PAT002 | px-get  (C-GET: the instances come back on the same association)"
px-find "$peer" --PatientID PAT002 | px-get "$peer" -d "$work/got" --pretty
(cd "$work/got" && find . -type f | sort)

say "px-push demo-data/got to px-listen  (C-STORE, one association, per-file statuses)"
px-push "PXLISTEN@127.0.0.1:$listen_port" "$work/got" --pretty
