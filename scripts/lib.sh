# lib.sh - the preamble px's peer and corpus scripts share; sourced, never run:
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
#   px_usage                  prints the calling script's header comment (after the #! line)
#   px_args MIN MAX ARGS...   -h/--help: usage, exit 0; fewer than MIN or more than MAX arguments
#                             (MAX "" for no limit): usage on stderr, exit 2
#   px_need_tools PKGS TOOL...  exit 1 naming each TOOL not on PATH, with the apt packages PKGS
#   die MESSAGE...            "SCRIPT: MESSAGE" on stderr, exit 1
#   px_wait_for PID TRIES CMD...  runs CMD every 0.2 s until it succeeds (return 0), PID exits or
#                             TRIES runs are spent (return 1)
#   px_start_failed PID LOG MESSAGE FILE...  "SCRIPT: MESSAGE; log tail:" and LOG's last lines on
#                             stderr, SIGTERM to PID, removes the FILEs, exit 1
#   px_take_port_block, px_free_ports N, px_without_port_lock: ports for test peers, from
#                             scripts/test-ports.sh (sourced here)

px_script=$(basename "$0")

px_usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

px_args() {
    local min=$1 max=$2
    shift 2
    if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
        px_usage
        exit 0
    fi
    if (($# < min)) || { [[ -n "$max" ]] && (($# > max)); }; then
        px_usage >&2
        exit 2
    fi
}

px_need_tools() {
    local packages=$1 tool
    shift
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "$px_script: $tool not found; install with scripts/setup-test-env.sh" \
                "(or: apt-get install -y $packages)" >&2
            exit 1
        fi
    done
}

die() {
    echo "$px_script: $*" >&2
    exit 1
}

px_wait_for() {
    local pid=$1 tries=$2
    shift 2
    for _ in $(seq 1 "$tries"); do
        kill -0 "$pid" 2>/dev/null || return 1
        "$@" && return 0
        sleep 0.2
    done
    return 1
}

px_start_failed() {
    local pid=$1 log=$2 message=$3
    shift 3
    echo "$px_script: $message; log tail:" >&2
    tail -n 20 "$log" >&2 || true
    kill -TERM "$pid" 2>/dev/null || true
    rm -f "$@"
    exit 1
}

source "$(dirname "${BASH_SOURCE[0]}")/test-ports.sh"
