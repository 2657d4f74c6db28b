#!/usr/bin/env bash
# optipipe serve's HTTP core (cli/serve.c, serve_http.c, serve_metrics.c):
# start and stop, /healthz, /metrics, routing, the Host check.
# Usage: serve_http.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

check "server starts" serve_start "$tmp/data"
curl -s "$SERVE_URL/healthz" >"$tmp/out"
check "healthz ok" test "$(json_field "$tmp/out" status)" = ok
check "serve.port written" test "$(cat "$tmp/data/serve.port")" = "$SERVE_PORT"
check "SIGTERM stops it with 0" serve_stop
finish
