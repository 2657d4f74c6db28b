#!/usr/bin/env bash
# The engine table (core/engine.h, docs/architecture.md): the SDK example's
# host code (sdk/examples/plugin-csv/host/) registers charts for its runs
# with no core edit, and they appear in the HTML report of a csv input; the
# built-in engines' entries answer `optipipe fetch` by their fetch names.
# Usage: engine_table.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
plugins=$(dirname "$bin")/plugins
if [ ! -f "$plugins/optipipe-csv.so" ]; then
    echo "SKIP: $plugins/optipipe-csv.so not built (make optipipe-csv)"
    exit 77
fi

"$bin" analyze --no-config --plugin-path "$plugins" --format html -o "$tmp/csv.html" \
    "$src/fixtures/csv/tasks.csv" >"$tmp/out" 2>"$tmp/err"
check "a csv input analyzes" test $? = 0
E2E_OUT=$tmp/csv.html
check "the example engine's chart is in the report" has "$tmp/csv.html" 'data-chart="csv-stages"'
check "... with its data table" has "$tmp/csv.html" 'Stages as a table'
check "... and no 'No chart' note" sh -c "! grep -q 'No chart for this run' '$tmp/csv.html'"
E2E_OUT=$tmp/out

"$bin" fetch nosuch http://127.0.0.1:9 >"$tmp/out" 2>"$tmp/err"
check "an unknown fetch: exit 2" test $? = 2
check "... naming the engines' fetches" has "$tmp/err" "(flink or spark-history)"
"$bin" fetch spark-history http://127.0.0.1:9 >"$tmp/out" 2>"$tmp/err"
check "a folder fetch still asks for --app" has "$tmp/err" "spark-history needs --app APP_ID"
finish
