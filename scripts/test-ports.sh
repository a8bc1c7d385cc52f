# test-ports.sh - ports for test peers outside the kernel's ephemeral range; sourced, never run:
#     source "$(dirname "${BASH_SOURCE[0]}")/test-ports.sh"    (scripts/lib.sh sources it)
#
#   px_take_port_block        takes a block of test ports for this shell (see below); in the script's
#                             own shell, not in $(...)
#   px_free_ports N           prints N ports of the block that bind now, in turn (takes the block when
#                             called in the script's own shell)
#   px_without_port_lock      closes the block's lock in a (child) shell about to exec a long-lived peer
#
# Test ports: a port from a bind to port 0 lies in the kernel's ephemeral range
# (/proc/sys/net/ipv4/ip_local_port_range), where any outgoing connection beside it can take it before the
# peer it was chosen for binds it. So peers get ports below that range, from a block a process owns: the
# ports from 10000 to the range's start (from 1024 when it starts lower) are cut into blocks of 256, block
# N starting at 10000 + 256 N; a process owns block N while it holds an exclusive flock on
# /tmp/px-test-ports/block-N.lock ($PX_TEST_PORTS_DIR overrides the folder), the lowest free N first.
# The same scheme as Tests/PXTestSupport/Ports.swift (TestPortBlock), so a script beside a `swift test`
# never hands out a port of the test's block. A script holds its block until it exits, so it must wait
# until its peer has bound the port (the start scripts wait until the peer answers), and close the lock
# in the peer (px_without_port_lock), or the block stays taken while the peer runs.

px_port_block_size=256

px_take_port_block() {
    [[ -n "${px_port_lock_fd:-}" ]] && return 0
    local low=32768 base=10000 count n dir=${PX_TEST_PORTS_DIR:-/tmp/px-test-ports}
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range || low=32768
    ((low - base >= px_port_block_size)) || base=1024
    count=$(((low - base) / px_port_block_size))
    mkdir -p "$dir"
    chmod 1777 "$dir" 2>/dev/null || true # shared by every user's test runs
    for ((n = 0; n < count; n++)); do
        exec {px_port_lock_fd}<>"$dir/block-$n.lock" || continue
        chmod 666 "$dir/block-$n.lock" 2>/dev/null || true
        if flock -n "$px_port_lock_fd"; then
            px_port_lock_file=$dir/block-$n.lock
            px_port_first=$((base + n * px_port_block_size))
            return 0
        fi
        exec {px_port_lock_fd}>&-
    done
    px_port_lock_fd=""
    echo "$(basename "$0"): no free block of test ports in $dir ($count blocks, all locked)" >&2
    exit 1
}

px_free_ports() {
    local n=$1 next ports
    if [[ -z "${px_port_lock_fd:-}" ]]; then
        # A block taken in $(...) would be given up as the subshell ends, before the peer binds its port.
        if ((BASH_SUBSHELL > 0)); then
            echo "$(basename "$0"): px_free_ports in a subshell: call px_take_port_block first" >&2
            exit 1
        fi
        px_take_port_block
    fi
    # The next port to offer is kept in the lock file, so that calls from subshells go on in turn.
    next=$(cat "$px_port_lock_file" 2>/dev/null || true)
    [[ "$next" =~ ^[0-9]+$ ]] || next=$px_port_first
    ports=$(python3 - "$px_port_first" "$px_port_block_size" "$next" "$n" <<'PY'
import socket
import sys

first, size, next_port, count = map(int, sys.argv[1:])
found = []
for offset in range(size):
    port = first + (next_port - first + offset) % size
    s = socket.socket()
    try:
        # Every address, no SO_REUSEADDR: taken when anything is bound to it, or in TIME_WAIT.
        s.bind(("0.0.0.0", port))
    except OSError:
        continue
    finally:
        s.close()
    found.append(port)
    if len(found) == count:
        break
if len(found) < count:
    sys.exit(f"no {count} free ports in {first}-{first + size - 1}")
print(" ".join(map(str, found)))
PY
    ) || exit 1
    next=${ports##* }
    echo $((px_port_first + (next + 1 - px_port_first) % px_port_block_size)) >"$px_port_lock_file"
    echo "$ports"
}

px_without_port_lock() {
    if [[ -n "${px_port_lock_fd:-}" ]]; then
        exec {px_port_lock_fd}>&-
        px_port_lock_fd=""
    fi
}
