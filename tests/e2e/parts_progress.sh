#!/usr/bin/env bash
# The progress bar's [n/N] counts a group of log parts read as one input
# (core/input_parts.c: Databricks rollover parts) once, not once per file.
# Usage: parts_progress.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"

python3 "$src/fixtures/spark/gen_platforms.py" rollover "$tmp/ro"
cp "$src/fixtures/demo/dbt/manifest.json" "$tmp/ro/set/"
OPTIPIPE_PROGRESS=always "$bin" analyze "$tmp/ro/set" >"$tmp/out" 2>"$tmp/err"
tr '\r' '\n' <"$tmp/err" >"$tmp/lines"
check "a folder of 3 parts + 1 file: 2 inputs planned" grep -q '^\[[12]/2\] ' "$tmp/lines"
check "... the group is the last, [2/2]" grep -q "^\[2/2\] set " "$tmp/lines"
check "... never more than planned" bash -c "! grep -q '^\[[0-9]*/[3-9]\]' '$tmp/lines'"
OPTIPIPE_PROGRESS=always "$bin" analyze "$tmp/ro/set/eventlog" \
    "$tmp/ro/set/eventlog-2024-01-01--09-00.gz" "$tmp/ro/set/eventlog-2024-01-01--10-00.gz" \
    >"$tmp/out" 2>"$tmp/err"
tr '\r' '\n' <"$tmp/err" >"$tmp/lines"
check "parts given as three arguments: one input, [1/1]" grep -q '^\[1/1\] ' "$tmp/lines"
check "... no [n/3]" bash -c "! grep -q '/3\]' '$tmp/lines'"
finish
