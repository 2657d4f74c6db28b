#!/usr/bin/env bash
# Every command that reads URL inputs passes the fetch options on: a fake
# JobManager on loopback (tests/fetch/fake_server.py, port chosen by the
# kernel, stopped at exit) answers 400 unless a request carries the header
# `X-Tenant: blue`, and `analyze URL --header` and `normalize URL --header`
# must both get through. normalize used to parse the options and drop them
# (issue #14): the one pipeline, op_session_run, now carries them.
# Usage: fetch_options.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout

fx="$src/fixtures/flink/window-bottleneck.json"
jid=$(job_of "$fx")
start_server flink "$fx" --require-header "X-Tenant: blue"

run analyze --format json --deterministic --no-config --no-baseline "$url" \
    --job "$jid" --header "X-Tenant: blue"
check "analyze URL --header: the header reaches the server (exit 0)" test "$rc" = 0
check "...and the job is analyzed" has "$tmp/out" '"source": "flink"'

run normalize "$url" --job "$jid" --header "X-Tenant: blue"
check "normalize URL --header: the header reaches the server (exit 0)" test "$rc" = 0
check "...and the run is in the model" has "$tmp/out" '"source": "flink"'
check "...no request was refused" lacks "$tmp/err" "missing header"

run normalize "$url" --job "$jid"
check "normalize URL without the header: refused by the server (exit 3)" test "$rc" = 3
check "...saying so" has "$tmp/err" "does not look like a Flink JobManager"

finish
