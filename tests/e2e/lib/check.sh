# tests/e2e/lib/check.sh - what the end-to-end test scripts share: a scratch
# directory $tmp (removed on exit), check/has/json_ok, and the closing
# "N passed, M failed" line that ctest's log shows.
# Source it after reading the script's arguments. A failed check prints the
# beginning of $E2E_OUT and $E2E_ERR (default $tmp/out and $tmp/err; a
# script may point them elsewhere) so the failure explains itself.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
E2E_OUT=$tmp/out
E2E_ERR=$tmp/err
E2E_SHOW=600 # bytes of each shown

check() { # check NAME COMMAND...: counts COMMAND's success
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name"
        [ -f "$E2E_OUT" ] && echo "  stdout: $(head -c "$E2E_SHOW" "$E2E_OUT" | cat -v)"
        [ -f "$E2E_ERR" ] && echo "  stderr: $(head -c "$E2E_SHOW" "$E2E_ERR" | cat -v)"
    fi
    return 0
}

has() { grep -q -- "$2" "$1"; } # has FILE PATTERN

json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }

finish() { # the summary line; the exit status says whether all passed
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}


# wait_until and the test hooks' helpers (hooks_on, hook_wait, ...)
. "$(dirname "${BASH_SOURCE[0]}")/wait.sh"
