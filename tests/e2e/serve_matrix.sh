#!/usr/bin/env bash
# optipipe serve's request path under a deterministic matrix (issue #24):
# every method x every route (and odd paths) x {no body, small, over 64
# KiB, chunked, chunked over 64 KiB} x header shapes (form, JSON,
# multipart with and without boundary, Expect: 100-continue, hostile
# cookies and tokens, a 15 KB header), over raw sockets (serve_matrix.py).
# Every request gets a well-formed answer without a 5xx (503 busy aside),
# the server answers /healthz after every route and stops with 0 on
# SIGTERM. Under the ASan build of the suite this is the sanitizer's run.
# Usage: serve_matrix.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"

# one worker and a short queue: the uploads the matrix makes are refused
# with 429 once it is full rather than analyzed by the dozen
check "server starts" serve_start "$tmp/data" --workers 1 --queue 2 \
    --max-upload-bytes 200000
E2E_OUT=$tmp/matrix.out
E2E_ERR=$SERVE_ERR
python3 "$here/serve_matrix.py" "$SERVE_PORT" >"$tmp/matrix.out" 2>&1
rc=$?
check "every request answered sanely, the server alive" test "$rc" = 0
check "the matrix ran whole" has "$tmp/matrix.out" "^matrix: [0-9]* requests, 0 surprises"
check "no crash report in the server's log" sh -c "! grep -q -e 'AddressSanitizer' -e 'runtime error' '$SERVE_ERR'"
check "SIGTERM stops it with 0" serve_stop
finish
