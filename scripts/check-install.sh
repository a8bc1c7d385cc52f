#!/usr/bin/env bash
# check-install.sh [PREFIX] - `make install PREFIX=...` (a new temporary folder by default), then checks what
# it installed:
#   - px and the ten px-* links answer --version ("0.1.0 (COMMIT)");
#   - each command has its bash, zsh and fish completion;
#   - one real job: the installed px-echo (native backend) against the installed px-listen, started on a free
#     loopback port for it: exit status 0 and a JSON envelope with "status": "success".
# Prints the install's time and size. .ci/run runs it after `make test`; a person can run it too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib.sh"
px_args 0 1 "$@"
prefix=${1:-$(mktemp -d)}
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
commands=(px-echo px-find px-move px-get px-listen px-push px-dump px-sync px-serve px-ls)

started=$SECONDS
make -C "$root" install PREFIX="$prefix"
echo "$px_script: make install took $((SECONDS - started)) s; $(du -sh "$prefix" | cut -f1) in $prefix" >&2

for command in px "${commands[@]}"; do
    [ -x "$prefix/bin/$command" ] || die "$prefix/bin/$command is not installed"
    version=$("$prefix/bin/$command" --version) || die "$command --version failed"
    [[ "$version" =~ ^(px\ )?[0-9]+\.[0-9]+\.[0-9]+\ \(.+\)$ ]] || die "$command --version said '$version'"
    echo "$command --version: $version" >&2
done
for command in "${commands[@]}"; do
    for file in "share/bash-completion/completions/$command" "share/zsh/site-functions/_$command" \
        "share/fish/vendor_completions.d/$command.fish"; do
        [ -s "$prefix/$file" ] || die "no completion $prefix/$file"
    done
done

work=$(mktemp -d)
listener=
cleanup() {
    if [ -n "$listener" ]; then kill -TERM "$listener" 2>/dev/null && wait "$listener" 2>/dev/null; fi
    rm -rf "$work"
    return 0
}
trap cleanup EXIT
"$prefix/bin/px-listen" --port 0 --aet PXCHECK -d "$work/received" --backend native \
    >"$work/events.ndjson" 2>"$work/listen.log" &
listener=$!
px_wait_for "$listener" 50 grep -q '"event":"listening"' "$work/events.ndjson" ||
    px_start_failed "$listener" "$work/listen.log" "px-listen did not start"
port=$(sed -n 's/.*"event":"listening".*"port":\([0-9]*\).*/\1/p' "$work/events.ndjson" | head -1)
[ -n "$port" ] || die "no port in px-listen's listening event: $(cat "$work/events.ndjson")"

status=0
output=$("$prefix/bin/px-echo" "PXCHECK@127.0.0.1:$port" --backend native) || status=$?
[ "$status" -eq 0 ] || die "px-echo against px-listen exited $status: $output"
python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["status"] == "success", d' "$output" ||
    die "px-echo did not print a success envelope: $output"
echo "px-echo PXCHECK@127.0.0.1:$port --backend native: $output" >&2
echo "$px_script: ok ($prefix)" >&2
