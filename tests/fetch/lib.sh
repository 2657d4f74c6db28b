# shellcheck shell=bash
# tests/fetch/lib.sh - sourced by tests/e2e/fetch_*.sh: checks, and fake
# servers (tests/fetch/fake_server.py) on 127.0.0.1 with kernel-chosen
# ports, each stopped at exit (and by its own --lifetime if we die).
# Expects: bin (the optipipe binary), src (the source dir).
bin=${bin:?} src=${src:?}

tmp=$(mktemp -d)
. "$src/tests/e2e/lib/wait.sh"
pass=0
fail=0
server_pids=""

cleanup() {
    local p
    for p in $server_pids; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

# Loopback only: a proxy from the environment must not see these requests.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

need_tools() { # need_tools TOOL... : skip (77) with a notice when missing
    local t
    for t in "$@"; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "SKIP: $t is not installed (the fetch tests need it)"
            exit 77
        fi
    done
    if ! "$bin" fetch --help >/dev/null 2>&1; then
        echo "SKIP: this optipipe has no 'fetch' command (cli/main.c dispatch)"
        exit 77
    fi
}

check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name (exit $rc)"
        echo "  stdout: $(head -c 800 "$tmp/out" 2>/dev/null)"
        echo "  stderr: $(head -c 800 "$tmp/err" 2>/dev/null)"
    fi
}

run() { # run ARGS... : runs optipipe with a hard stop; exit code in $rc
    timeout 120 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

has() { grep -q -- "$2" "$1"; }
lacks() { ! grep -q -- "$2" "$1"; }

# start_server ARGS... : starts fake_server.py ARGS; sets $port and $url.
start_server() {
    local pf="$tmp/port.$RANDOM.$RANDOM"
    python3 "$src/tests/fetch/fake_server.py" "$@" --port-file "$pf" \
        --lifetime 240 2>>"$tmp/server.log" &
    server_pids="$server_pids $!"
    last_pid=$!
    _started() { [ -s "$pf" ] || ! kill -0 "$last_pid" 2>/dev/null; }
    wait_until _started
    if [ ! -s "$pf" ]; then
        echo "FAIL: the fake server did not start: $*"
        tail -5 "$tmp/server.log"
        exit 1
    fi
    port=$(cat "$pf")
    # shellcheck disable=SC2034 # used by the sourcing scripts
    url="http://127.0.0.1:$port"
}

stop_server() { # stops the server started last
    kill "$last_pid" 2>/dev/null
    wait "$last_pid" 2>/dev/null
}

free_port() { python3 "$src/tests/fetch/fake_server.py" free-port; }

json_get() { # json_get FILE PYEXPR : prints PYEXPR evaluated with d = the JSON
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

job_of() { # job_of FIXTURE : the job id of a flink_rest_export fixture
    python3 -c 'import json,re,sys
d=json.load(open(sys.argv[1]))
print([k for k in d["responses"] if re.fullmatch(r"/jobs/[0-9a-f]+", k)][0][6:])' "$1"
}

finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}
