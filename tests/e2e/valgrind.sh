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
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --trace-children=no --child-silent-after-fork=no --log-file="$log.%p" \
    "$bin" analyze --format json --isolate always "$src/fixtures/demo" >/dev/null 2>"$log.stderr"
rc=$?
cat "$log".[0-9]* 2>/dev/null
if [ $rc = 99 ] || grep -q "ERROR SUMMARY: [1-9]" "$log".[0-9]* 2>/dev/null; then
    echo "FAIL: valgrind reported errors"
    exit 1
fi
if [ $rc != 0 ] && [ $rc != 1 ]; then
    echo "FAIL: optipipe exited $rc"; cat "$log.stderr"; exit 1
fi
echo "1 passed, 0 failed"
