#!/usr/bin/env bash
# The demo analysis is valgrind-clean: no invalid access, no leak, in the
# parent and in forked rule workers. Skipped (77) in sanitizer builds, where
# valgrind cannot run, and when valgrind is not installed.
# Usage: valgrind.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
if [ "${OP_SANITIZE:-0}" = 1 ]; then
    echo "skipped: sanitizer build (valgrind runs on the normal build)"
    exit 77
fi
if ! command -v valgrind >/dev/null; then
    echo "skipped: valgrind is not installed (apt-get install valgrind)"
    exit 77
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
fail=0
# pass 1: everything in one process, strict about leaks
# pass 2: rules in forked workers; workers _exit() with the parent's heap
#         copied, so only memory errors count there, not leaks
vg() { # vg NAME VALGRIND-ARGS... -- OPTIPIPE-ARGS...
    local name=$1
    shift
    valgrind --quiet --error-exitcode=99 --trace-children=no \
        --log-file="$log/$name.%p" "$@" >/dev/null 2>"$log/$name.stderr"
    local rc=$?
    if [ $rc = 99 ] || grep -q "ERROR SUMMARY: [1-9]" "$log/$name".[0-9]* 2>/dev/null; then
        echo "FAIL: valgrind reported errors ($name)"
        cat "$log/$name".[0-9]*
        fail=1
    elif [ $rc != 0 ] && [ $rc != 1 ]; then
        echo "FAIL: optipipe exited $rc ($name)"
        cat "$log/$name.stderr"
        fail=1
    fi
}
# --rule-timeout-ms 0 --rule-pack-timeout-ms 0: valgrind runs rules 20-50 times slower, and a loaded
# machine slower again; a wall-clock limit would fail the test, not the code
# (the instruction and memory limits still apply).
vg inproc --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
    "$bin" analyze --format json --isolate never --rule-timeout-ms 0 --rule-pack-timeout-ms 0 "$src/fixtures/demo"
vg isolated --leak-check=no \
    "$bin" analyze --format json --isolate always --rule-timeout-ms 0 --rule-pack-timeout-ms 0 "$src/fixtures/demo"
if [ $fail = 0 ]; then
    echo "2 passed, 0 failed"
else
    echo "0 passed, 1 failed"
fi
exit $fail
