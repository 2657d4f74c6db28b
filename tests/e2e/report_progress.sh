#!/usr/bin/env bash
# The progress bar of long parses: never in a pipe or file, never with
# --quiet, and drawn (then cleared) when OPTIPIPE_PROGRESS=always forces
# it past the terminal and half-second checks, which a test cannot meet
# without depending on timing.
# Usage: report_progress.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_ERR=$tmp/err
E2E_OUT=/nonexistent
spark="$src/fixtures/demo/spark-application_1700000000000_0042.zstd"

unset OPTIPIPE_PROGRESS
"$bin" analyze "$src/fixtures/demo" >"$tmp/out" 2>"$tmp/err"
check "no bar when stderr is a file" bash -c "! grep -q \$'\\r' '$tmp/err'"
"$bin" analyze "$src/fixtures/demo" 2>&1 >/dev/null | cat >"$tmp/err"
check "no bar when stderr is a pipe" bash -c "! grep -q \$'\\r' '$tmp/err'"

OPTIPIPE_PROGRESS=always "$bin" analyze "$spark" >"$tmp/out" 2>"$tmp/err"
check "forced: the bar names the input, bytes and rate" \
    grep -q "spark-application_1700000000000_0042.zstd .* of .*/s" "$tmp/err"
check "forced: [n/N] of the files" grep -q "\[1/1\] spark-application" "$tmp/err"
check "forced: a compressed file's percentage counts compressed bytes" \
    grep -q "\] *[0-9]*%  .* of 29.3 KiB compressed" "$tmp/err"
check "forced: the bar is cleared at the end" grep -q $'\r\033\[K$' "$tmp/err"
check "forced: the report itself is unchanged" grep -q "opti-pipe 0.1.0" "$tmp/out"

OPTIPIPE_PROGRESS=always "$bin" analyze "$src/fixtures/demo" >"$tmp/out" 2>"$tmp/err"
tr '\r' '\n' <"$tmp/err" >"$tmp/lines"
check "a folder: [n/N] counts its files" grep -q "^\[1/10\] manifest.json " "$tmp/lines"
check "... up to the last" grep -q "^\[10/10\] spark-application" "$tmp/lines"
check "a whole JSON document: 100% of its size once read" \
    grep -q "^\[9/10\] flink-window-bottleneck.json  \[#*\] 100%  54.8 KiB of 54.8 KiB  " "$tmp/lines"
check "... a plain file's bytes are not called compressed" \
    bash -c "! grep 'flink-window-bottleneck.json' '$tmp/lines' | grep -q compressed"
mkdir -p "$tmp/two"
cp "$spark" "$src/fixtures/demo/flink-window-bottleneck.json" "$tmp/two/"
OPTIPIPE_PROGRESS=always "$bin" analyze "$tmp/two" "$src/fixtures/demo/dbt/manifest.json" \
    >"$tmp/out" 2>"$tmp/err"
check "[n/N] over several arguments" bash -c "tr '\r' '\n' <'$tmp/err' | grep -q '^\[3/3\] manifest.json'"

OPTIPIPE_PROGRESS=always "$bin" analyze --quiet "$spark" >"$tmp/out" 2>"$tmp/err"
check "--quiet: no bar even when forced" bash -c "! grep -q \$'\\r' '$tmp/err'"

OPTIPIPE_PROGRESS=always "$bin" analyze --format json "$spark" >"$tmp/out" 2>"$tmp/err"
check "forced: stdout stays clean json" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"

finish
