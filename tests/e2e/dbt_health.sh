#!/usr/bin/env bash
# Issue #27, run health from history: seven nightly dbt builds
# (fixtures/dbt/health, each night's run_results with its own manifest)
# analyzed one night at a time into a run store, as a scheduler would:
#  - the last night's findings, read through ctx.history, name the flaky
#    test (flip rate, failing runs), the needless rebuild of fct_events
#    and the two trends (volume, regression);
#  - `history runs JOB --node ID` prints one model's time run by run, with
#    its sparkline, and refuses a bad metric name;
#  - the job page of `optipipe serve` lists the newest run's findings.
# Usage: dbt_health.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"
cd "$src" || exit 1

mkdir -p "$tmp/data"
db=$tmp/data/history.db
nights() {
    local d
    for d in fixtures/dbt/health/2024-05-0*; do
        "$bin" analyze -q --pack dbt --history "$db" --format json "$d" >"$tmp/last.json" \
            2>"$E2E_ERR" || [ $? = 1 ] || return 1
    done
}
check "seven nights recorded one by one" nights

said() { # said RULE NODE TEXT: the last night has that finding
    python3 - "$tmp/last.json" "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rule, node, text = sys.argv[2:5]
sys.exit(0 if any(f["rule"] == rule and f.get("node") == node and text in f["message"]
                  for f in doc["findings"]) else 1)
PY
}
E2E_OUT=$tmp/last.json
check "flaky test from the store: flip rate" said dbt.flaky-tests \
    test.shop.not_null_fct_events_id.748ded8fe4 "it flipped 5 times (flip rate 83%)"
check "needless rebuild from the store" said dbt.needless-rebuilds model.shop.fct_events \
    "rebuilt in full in each of the last 7 runs"
check "volume trend" said dbt.model-trend model.shop.fct_sessions "the data grows"
check "regression trend" said dbt.model-trend model.shop.fct_orders "the query got slower"

"$bin" history runs shop/build --history "$db" --node model.shop.fct_orders \
    --metric execution_time_ms >"$tmp/h.txt" 2>"$E2E_ERR"
E2E_OUT=$tmp/h.txt
check "history runs --node: seven values" test "$(grep -c '^2024-05-0' "$tmp/h.txt")" = 7
check "  and the node's sparkline" grep -q '^model.shop.fct_orders execution_time_ms: ' "$tmp/h.txt"
check "  a bad metric name is refused" \
    sh -c '! "$1" history runs shop/build --history "$2" --node x --metric "a b" 2>/dev/null >/dev/null' \
    _ "$bin" "$db"

check "server starts" serve_start "$tmp/data"
if [ -n "$SERVE_URL" ]; then
    E2E_OUT=$tmp/job.html
    E2E_ERR=$SERVE_ERR
    check "the job page is 200" test "$(serve_get /jobs/shop%2Fbuild "$tmp/job.html")" = 200
    check "  it lists the newest run's findings" grep -q 'Findings of the newest run' "$tmp/job.html"
    check "  the trend among them" grep -q 'dbt.model-trend' "$tmp/job.html"
    check "  and the flaky test" grep -q 'dbt.flaky-tests' "$tmp/job.html"
    check "server stops" serve_stop
fi
finish
