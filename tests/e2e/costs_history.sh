#!/usr/bin/env bash
# Money kept in the run store (docs/costs.md "Kept with the run"): two
# nightly dbt builds recorded with a team's rates keep their estimated cost
# (the BigQuery bill: bytes_billed / 2^40 x per_tib) and each node's share
# of it; `history runs` shows the cost of each run (text and JSON), the
# trend of estimated_cost charts it, a node's cost reads back with --node,
# the server's job page has the cost column and chart, and runs recorded
# without rates have none.
# Usage: costs_history.sh OPTIPIPE SOURCE_DIR
set -u
bin=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"
D=$src/fixtures/demo/dbt
mkdir -p "$tmp/data"
db=$tmp/data/history.db
cat >"$tmp/rates.lua" <<'LUA'
return { costs = { currency = "EUR", bigquery = { per_tib = 6.25 } } }
LUA
echo 'return { }' >"$tmp/none.lua"

record() { # record CONFIG NIGHT...: analyze each night with the manifest
    local cfg=$1 n
    shift
    for n in "$@"; do
        "$bin" analyze --config "$cfg" --history "$db" --format json \
            "$D/run_results-2024-05-0$n.json" "$D/manifest.json" >"$tmp/a$n.json" 2>"$E2E_ERR"
        [ $? -le 1 ] || return 1
    done
}
check "two nights recorded with rates" record "$tmp/rates.lua" 1 2
check "history runs --format json" sh -c "'$bin' history runs --history '$db' shop/build \
    --format json >'$tmp/runs.json' 2>'$E2E_ERR'"
E2E_OUT=$tmp/runs.json

# the cost of each run is its bill, from the bytes it billed
bill() {
    python3 - "$tmp/runs.json" "$bin" "$D" <<'PY'
import json, subprocess, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 2, runs
for night, r in zip((2, 1), runs):
    m = json.loads(subprocess.run(
        [sys.argv[2], "normalize", "--format", "json",
         "%s/run_results-2024-05-0%d.json" % (sys.argv[3], night)],
        capture_output=True, check=True).stdout)
    billed = m["runs"][0]["metrics"]["bytes_billed"]
    want = billed / 2 ** 40 * 6.25
    assert abs(r["estimated_cost"] - want) < 1e-9 * max(1, want), (r, want)
    assert r["currency"] == "EUR", r
print("ok")
PY
}
check "each run's estimated_cost is its bill, in the config's currency" bill

check "history runs (text) says the cost of each run" sh -c "'$bin' history runs \
    --history '$db' shop/build >'$tmp/runs.txt' && [ \$(grep -c 'cost EUR [0-9]*\.[0-9][0-9]\$' \
    '$tmp/runs.txt') = 2 ]"
check "--metric estimated_cost charts it" sh -c "'$bin' history runs --history '$db' \
    shop/build --metric estimated_cost | grep -q 'estimated_cost: .* min [0-9]*\.[0-9][0-9]  max'"

# the nodes' shares add up to the run's cost (each read back with --node)
nodes() {
    python3 - "$tmp/runs.json" "$bin" "$db" "$D/run_results-2024-05-02.json" <<'PY'
import json, subprocess, sys
run = json.load(open(sys.argv[1]))["runs"][0]
m = json.loads(subprocess.run([sys.argv[2], "normalize", "--format", "json", sys.argv[4]],
                              capture_output=True, check=True).stdout)
total, priced = 0.0, 0
for n in m["runs"][0]["nodes"]:
    out = json.loads(subprocess.run(
        [sys.argv[2], "history", "runs", "--history", sys.argv[3], "shop/build", "--node",
         n["id"], "--metric", "estimated_cost", "--format", "json"],
        capture_output=True, check=True).stdout)
    v = out["runs"][0]["estimated_cost"]
    if v is not None:
        total += v
        priced += 1
assert priced, "no node has an estimated_cost"
assert abs(total - run["estimated_cost"]) < 1e-6, (total, run["estimated_cost"])
print("ok")
PY
}
check "each node's share is kept and they add up to the run's" nodes
check "a node's cost reads back with --node" sh -c "'$bin' history runs --history '$db' \
    shop/build --node model.shop.fct_orders --metric estimated_cost | grep -q 'model.shop.fct_orders estimated_cost'"

check "server starts" serve_start "$tmp/data"
if [ -n "$SERVE_URL" ]; then
    E2E_OUT=$tmp/job.html
    E2E_ERR=$SERVE_ERR
    check "the job page is 200" test "$(serve_get /jobs/shop%2Fbuild "$tmp/job.html")" = 200
    check "  with the estimated cost of each run" \
        test "$(grep -o 'EUR [0-9]*\.[0-9][0-9]</td>' "$tmp/job.html" | wc -l)" = 2
    check "  and its chart" grep -q 'Estimated cost' "$tmp/job.html"
    check "server stops" serve_stop
fi

rm -f "$db"
check "recorded without rates" record "$tmp/none.lua" 1
check "  no estimated_cost" sh -c "'$bin' history runs --history '$db' shop/build \
    --format json | python3 -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"]; \
    sys.exit(0 if r and all(\"estimated_cost\" not in x for x in r) else 1)'"
finish
