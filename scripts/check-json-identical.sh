#!/usr/bin/env bash
# check-json-identical.sh - the px commands' stdout, byte for byte, from two builds.
#
# Usage: scripts/check-json-identical.sh BASE_BIN NEW_BIN [WORKDIR]
#
# BASE_BIN and NEW_BIN are folders holding px-echo, px-find, px-move, px-get, px-push,
# px-listen and px-dump (e.g. a copy of `swift build --show-bin-path` from main, and this
# checkout's). For each build and each backend (dcmtk, native) the script runs the same cases
# against the demo's peers: DCMTK's dcmqrscp loaded with scripts/make-qr-corpus.py's archive
# and px-listen (of that build, on that backend) as the C-MOVE destination and C-STORE peer,
# with an --on-series-complete hook. The cases: px-echo (ok, refused, unknown host, usage
# errors); px-find in every --format, at every --level, two-phase, with keys, --limit and pypx
# spellings; px-move and px-get from UIDs and from piped px-find output, with failures;
# px-push of retrieved files and of a non-DICOM file; px-dump in every format; px-listens
# NDJSON events, its final envelope, the hook's environment and the received tree.
#
# Every case runs in one path (WORKDIR/run) and stdin is /dev/null unless piped, so nothing
# needs masking but the order of concurrent things: the hook's lines (hooks run concurrently) and
# the seriesComplete/associationClosed events an association's end sets off are sorted.
# Ports are chosen once per invocation and shared by both builds. Each case records its stdout
# and its exit status. The outputs go to WORKDIR/out/{base,new}-{dcmtk,native}/ and are
# compared with diff -r; the script prints a summary and exits 0 when every case is identical,
# 1 when any differs (the diff is printed), 2 for a usage error.
#
# WORKDIR defaults to a new temporary folder, removed at the end when every case matched.
# Needs DCMTK and the Python venv (scripts/setup-test-env.sh).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
px_args 2 3 "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
python="${PX_VENV:-$root/.venv}/bin/python"
base_bin=$(cd "$1" && pwd)
new_bin=$(cd "$2" && pwd)
for bin in "$base_bin" "$new_bin"; do
    for tool in px-echo px-find px-move px-get px-push px-listen px-dump; do
        [[ -x "$bin/$tool" ]] || { echo "check-json-identical: no $bin/$tool" >&2; exit 2; }
    done
done
for tool in dcmqrscp storescu echoscu findscu movescu getscu storescp; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "check-json-identical: $tool not found; run scripts/setup-test-env.sh" >&2
        exit 2
    }
done
[[ -x "$python" ]] || { echo "check-json-identical: no Python venv at $python" >&2; exit 2; }

keep_work=1
if [[ $# -eq 3 ]]; then
    mkdir -p "$3"
    work=$(cd "$3" && pwd)
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/px-json-check.XXXXXX")
    keep_work=0
fi
run="$work/run"
out="$work/out"
rm -rf "$out" "$run"
mkdir -p "$out"

say() { printf '== %s\n' "$*" >&2; }
# A free TCP port for a peer, from a block of test ports below the kernel's ephemeral range, taken here
# for the whole run (scripts/test-ports.sh).
px_take_port_block
free_port() { px_free_ports 1; }

orig_path=$PATH
listener_pid=""
cleanup() {
    if [[ -n "$listener_pid" ]]; then
        kill "$listener_pid" 2>/dev/null || true
        wait "$listener_pid" 2>/dev/null || true
    fi
    bash "$root/scripts/peer-stop.sh" "$work/qr/dcmqrscp.pid" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# ---- the peers both builds talk to ------------------------------------------------------------
listen_port=$(free_port)
refused_port=$(free_port)
if [[ ! -f "$work/corpus/index.json" ]]; then
    say "sample archive (scripts/make-qr-corpus.py)"
    "$python" "$root/scripts/make-qr-corpus.py" "$work/corpus" >/dev/null
fi
say "dcmqrscp (QRSCP), C-MOVE destination PXLISTEN on port $listen_port"
qr_port=$(PX_QR_DESTS="PXLISTEN=127.0.0.1:$listen_port,NOWHERE=127.0.0.1:$refused_port" \
    bash "$root/scripts/dcmqrscp-start.sh" "$work/qr")
bash "$root/scripts/dcmqrscp-load.sh" "$work/qr" "$work/corpus" >/dev/null 2>&1
peer="QRSCP@127.0.0.1:$qr_port"
listener="PXLISTEN@127.0.0.1:$listen_port"
study1=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["patients"][0]["studies"][0]["uid"])' "$work/corpus/index.json" 2>/dev/null || true)
if [[ -z "$study1" ]]; then
    # index.json's shape is the corpus script's; fall back to asking the archive.
    study1=$(findscu -S -k QueryRetrieveLevel=STUDY -k PatientID=PAT001 -k StudyInstanceUID \
        -aec QRSCP 127.0.0.1 "$qr_port" 2>&1 | sed -n 's/.*(0020,000d) UI \[\([0-9.]*\)\].*/\1/p' | sort | head -1)
fi
[[ -n "$study1" ]] || { echo "check-json-identical: cannot find PAT001's study" >&2; exit 1; }

# ---- one suite: every case with one build on one backend ----------------------------------------
# case NAME CMD ARGS...: stdout to NAME.out, then the exit status; stdin from /dev/null.
dir=""
case_() {
    local name=$1
    shift
    local rc=0
    "$@" </dev/null >"$dir/$name.out" 2>>"$dir/stderr.log" || rc=$?
    echo "exit $rc" >>"$dir/$name.out"
}
# piped NAME 'SHELL PIPELINE': the same for a pipeline (the last command's status).
piped() {
    local name=$1
    local rc=0
    bash -o pipefail -c "$2" </dev/null >"$dir/$name.out" 2>>"$dir/stderr.log" || rc=$?
    echo "exit $rc" >>"$dir/$name.out"
}

# Waits until the listener has closed every association it opened and its event file has stopped
# growing, so the next case's events cannot interleave with this one's.
settle_listener() {
    local events=$dir/listen-events.ndjson
    local deadline=$((SECONDS + 30)) last=-1 size
    while ((SECONDS < deadline)); do
        local opened closed
        opened=$(grep -c '"associationOpened"' "$events" || true)
        closed=$(grep -c '"associationClosed"' "$events" || true)
        size=$(stat -c %s "$events")
        if [[ "$opened" == "$closed" && "$size" == "$last" ]]; then return 0; fi
        last=$size
        sleep 0.2
    done
    echo "check-json-identical: listener did not settle" >&2
}

suite() {
    local bin=$1 backend=$2 label=$3
    dir="$out/$label"
    mkdir -p "$dir"
    rm -rf "$run"
    mkdir -p "$run"
    local b=(--backend "$backend")
    say "$label: $bin"

    # Every px command by name from PATH: argv[0], which the envelope's "command" echoes, is then
    # the same for both builds.
    PATH="$bin:$orig_path"

    # The receiver, with a hook that records its environment.
    px-listen --port "$listen_port" --aet PXLISTEN -d "$run/received" "${b[@]}" \
        --on-series-complete /bin/sh -c \
        'printf "%s|%s|%s|%s|%s|%s\n" "$PX_SERIES_DIR" "$PX_SERIES_UID" "$PX_STUDY_UID" "$PX_PATIENT_ID" "$PX_INSTANCES" "$PX_COMPLETION_REASON" >>"$0"' \
        "$run/hooks.txt" \
        </dev/null >"$dir/listen-events.ndjson" 2>"$dir/listen.log" &
    listener_pid=$!
    local deadline=$((SECONDS + 20))
    until px-echo "$listener" --backend native >/dev/null 2>&1; do
        ((SECONDS < deadline)) || { echo "check-json-identical: px-listen did not start" >&2; exit 1; }
        sleep 0.1
    done
    settle_listener

    # px-echo
    case_ echo px-echo "$peer" "${b[@]}"
    case_ echo-pretty px-echo "$peer" "${b[@]}" --pretty
    case_ echo-pypx px-echo --aec QRSCP --serverIP 127.0.0.1 --serverPort "$qr_port" "${b[@]}"
    case_ echo-refused px-echo "127.0.0.1:$refused_port" "${b[@]}"
    case_ echo-wrong-aec px-echo "NOTQRSCP@127.0.0.1:$qr_port" "${b[@]}"
    case_ echo-unknown-host px-echo "no-such-host.invalid:104" "${b[@]}"
    case_ echo-usage-port px-echo "127.0.0.1:notaport" "${b[@]}"
    case_ echo-usage-option px-echo "127.0.0.1:1" --no-such-option "${b[@]}"
    case_ echo-usage-nopeer px-echo "${b[@]}"
    case_ echo-usage-aet px-echo "$peer" --aet "THIS-AE-TITLE-IS-TOO-LONG" "${b[@]}"

    # px-find: two-phase, every format, every level, keys.
    case_ find px-find "$peer" "${b[@]}"
    case_ find-pretty px-find "$peer" --PatientName 'M*' --pretty "${b[@]}"
    for format in pypx pypx-clean dicom-json ndjson csv table tree; do
        case_ "find-2phase-$format" px-find "$peer" --format "$format" "${b[@]}"
        for level in study series image; do
            case_ "find-$level-$format" px-find "$peer" --level "$level" --format "$format" "${b[@]}"
        done
        case_ "find-patient-$format" px-find "$peer" --level patient --model patient --format "$format" "${b[@]}"
    done
    case_ find-patientroot-study px-find "$peer" --model patient --level study --PatientID PAT001 "${b[@]}"
    case_ find-keys px-find "$peer" --level image -k StudyInstanceUID="$study1" -k "(0008,0060)" -k InstanceNumber "${b[@]}"
    case_ find-limit px-find "$peer" --level study --limit 1 "${b[@]}"
    case_ find-limit-2phase px-find "$peer" --limit 2 "${b[@]}"
    case_ find-studyonly px-find "$peer" --StudyOnly --PatientID 'PAT00*' "${b[@]}"
    case_ find-returntags px-find "$peer" --level series --QueryReturnTags "SeriesInstanceUID,Modality" "${b[@]}"
    case_ find-pypx08 px-find "$peer" --patientID PAT002 --studyDescription 'Chest*' "${b[@]}"
    case_ find-series-keys px-find "$peer" --Modality MR "${b[@]}"
    case_ find-utf8 px-find "$peer" --PatientName '山田*' --level study "${b[@]}"
    case_ find-nomatch px-find "$peer" --PatientID NOBODY "${b[@]}"
    case_ find-refused px-find "127.0.0.1:$refused_port" "${b[@]}"
    case_ find-usage-limit px-find "127.0.0.1:1" --limit many "${b[@]}"
    case_ find-usage-limit0 px-find "$peer" --limit 0 "${b[@]}"
    case_ find-usage-patientlevel px-find "$peer" --level patient "${b[@]}"
    case_ find-usage-key px-find "$peer" -k NoSuchKeyword=1 "${b[@]}"

    # px-move: piped, explicit UIDs, patient root, failures.
    piped move-piped "px-find '$peer' --PatientID PAT001 | px-move '$peer' --destination PXLISTEN --pretty ${b[*]}"
    settle_listener
    piped move-piped-ndjson "px-find '$peer' --PatientID PAT003 --level image --format ndjson | px-move '$peer' --destination PXLISTEN ${b[*]}"
    settle_listener
    case_ move-study px-move "$peer" --destination PXLISTEN --StudyInstanceUID "$study1" "${b[@]}"
    settle_listener
    case_ move-patientroot px-move "$peer" --aem PXLISTEN --model patient --PatientID PAT001 --StudyInstanceUID "$study1" "${b[@]}"
    settle_listener
    case_ move-unknown-dest px-move "$peer" --destination NOSUCHAE --StudyInstanceUID "$study1" "${b[@]}"
    case_ move-refused-dest px-move "$peer" --destination NOWHERE --StudyInstanceUID "$study1" "${b[@]}"
    case_ move-nothing px-move "$peer" --destination PXLISTEN --StudyInstanceUID 1.2.3.4.5 "${b[@]}"
    piped move-empty-stdin "echo '{\"status\":\"success\",\"data\":[]}' | px-move '$peer' --destination PXLISTEN ${b[*]}"
    piped move-bad-stdin "echo 'not json' | px-move '$peer' --destination PXLISTEN ${b[*]}"
    case_ move-usage-nodest px-move "127.0.0.1:1" "${b[@]}"
    case_ move-usage-series px-move "$peer" --destination PXLISTEN --SeriesInstanceUID 1.2 "${b[@]}"
    case_ move-usage-model px-move "$peer" --destination PXLISTEN --model patient --StudyInstanceUID "$study1" "${b[@]}"
    case_ move-refused px-move "127.0.0.1:$refused_port" --destination PXLISTEN --StudyInstanceUID "$study1" "${b[@]}"

    # px-get: piped, explicit UIDs, patient root, failures.
    piped get-piped "px-find '$peer' --PatientID PAT002 | px-get '$peer' -d '$run/got' --pretty ${b[*]}"
    case_ get-study px-get "$peer" -d "$run/got-study" --StudyInstanceUID "$study1" "${b[@]}"
    case_ get-patientroot px-get "$peer" -d "$run/got-patient" --model patient --PatientID PAT001 --StudyInstanceUID "$study1" "${b[@]}"
    piped get-piped-image "px-find '$peer' --PatientID PAT004 --level image --format ndjson | px-get '$peer' --datadir '$run/got-image' ${b[*]}"
    case_ get-nothing px-get "$peer" -d "$run/got-none" --StudyInstanceUID 1.2.3.4.5 "${b[@]}"
    piped get-empty-stdin "echo '' | px-get '$peer' -d '$run/got-none' ${b[*]}"
    case_ get-usage-option px-get "127.0.0.1:1" --no-such-option "${b[@]}"
    case_ get-usage-sop px-get "$peer" --SOPInstanceUID 1.2 "${b[@]}"
    case_ get-refused px-get "127.0.0.1:$refused_port" -d "$run/got-none" --StudyInstanceUID "$study1" "${b[@]}"
    (cd "$run" && find got got-study got-patient got-image -type f 2>/dev/null | sort) >"$dir/get-tree.txt"

    # px-push: retrieved files to the listener, a non-DICOM file, failures.
    printf 'not DICOM\n' >"$run/not-dicom.dcm"
    case_ push px-push "$listener" "$run/got" "${b[@]}"
    settle_listener
    case_ push-pretty-mixed px-push "$listener" "$run/got-image" "$run/not-dicom.dcm" --pretty "${b[@]}"
    settle_listener
    case_ push-missing px-push "$listener" "$run/no-such-file.dcm" "${b[@]}"
    case_ push-refused px-push "127.0.0.1:$refused_port" "$run/got" "${b[@]}"
    case_ push-usage-nofiles px-push "$listener" "${b[@]}"
    case_ push-usage-window px-push "127.0.0.1:1" a.dcm --window 0 "${b[@]}"

    # px-dump: every format, on files the archive holds.
    local files=("$work/corpus"/*.dcm)
    [[ -e "${files[0]}" ]] || mapfile -t files < <(find "$work/corpus" -name '*.dcm' | sort | head -3)
    case_ dump px-dump "${files[@]:0:2}"
    case_ dump-compact-meta px-dump --compact --meta "${files[@]:0:3}"
    case_ dump-pypx px-dump --format pypx "${files[0]}"
    case_ dump-text px-dump -f text --header-only "${files[0]}"
    case_ dump-bad px-dump "$run/not-dicom.dcm" "${files[0]}" "$run/no-such-file.dcm"
    case_ dump-usage px-dump

    # px-listen: usage errors, then the receiver's events and final envelope.
    case_ listen-usage-port px-listen --port 70000 "${b[@]}"
    case_ listen-usage-layout px-listen --port 0 --layout '{NoSuchKeyword}.dcm' "${b[@]}"
    case_ listen-usage-aet px-listen --port 0 --aet "" "${b[@]}"
    case_ listen-usage-grace px-listen --port 0 --shutdown-grace -1 "${b[@]}"

    settle_listener
    kill -TERM "$listener_pid"
    local rc=0
    wait "$listener_pid" || rc=$?
    listener_pid=""
    echo "exit $rc" >>"$dir/listen-events.ndjson"
    # When an association ends, the series it brought complete together, in no fixed order, and
    # may be reported before or after its associationClosed: sort each such run of events.
    mv "$dir/listen-events.ndjson" "$dir/listen-events.raw"
    "$python" -c 'import json, sys
run = []
def flush():
    sys.stdout.writelines(sorted(run)); run.clear()
for line in open(sys.argv[1], encoding="utf-8"):
    try:
        event = json.loads(line).get("event")
    except ValueError:
        event = None
    if event in ("seriesComplete", "associationClosed"):
        run.append(line)
    else:
        flush(); sys.stdout.write(line)
flush()' "$dir/listen-events.raw" >"$dir/listen-events.ndjson"
    sort "$run/hooks.txt" >"$dir/listen-hooks.txt" 2>/dev/null || : >"$dir/listen-hooks.txt"
    (cd "$run" && find received -type f | sort) >"$dir/listen-tree.txt"
    mv "$dir/stderr.log" "$dir/stderr.log.txt"
}

for backend in dcmtk native; do
    suite "$base_bin" "$backend" "base-$backend"
    suite "$new_bin" "$backend" "new-$backend"
done

# ---- compare ------------------------------------------------------------------------------------
status=0
for backend in dcmtk native; do
    cases=$(find "$out/base-$backend" -name '*.out' | wc -l)
    if diff -r -x 'stderr.log.txt' -x 'listen.log' -x 'listen-events.raw' "$out/base-$backend" "$out/new-$backend" >"$work/diff-$backend.txt"; then
        say "$backend: identical ($cases cases, listen events, hook environments, trees)"
    else
        say "$backend: DIFFERENT"
        cat "$work/diff-$backend.txt"
        status=1
    fi
done
if ((status == 0 && keep_work == 0)); then
    rm -rf "$work"
else
    say "outputs kept in $out"
fi
exit "$status"
