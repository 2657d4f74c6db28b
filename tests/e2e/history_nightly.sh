#!/usr/bin/env bash
# Nightly Spark runs of one app with a new application id every night
# (fixtures/spark-nightly/steady): a finding dismissed on night 7 stays
# dismissed on night 8 (fingerprints keyed by the job, not the app id),
# the run store records the decision with night 8's finding, and rules see
# nights 1-7 through ctx.history.
# Usage: history_nightly.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=out
E2E_ERR=err
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
cd "$tmp" || exit 1
nights=$src/fixtures/spark-nightly/steady
op() { "$bin" "$@" >out 2>err; rc=$?; }
field() { # field JSON PYTHON-EXPR over d (the document)
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}
config_fp='[f["fingerprint"] for f in d["findings"] if f["rule"] == "spark.config"][0]'

for n in 01 02 03 04 05 06 07; do
    "$bin" analyze -q --no-config --history h.db "$nights/night-$n.log.gz" >/dev/null 2>&1
done
op analyze --no-config --format json --history h.db "$nights/night-07.log.gz"
cp out n7.json
fp7=$(field n7.json "$config_fp")
check "night 7 has the spark.config finding" [ -n "$fp7" ]
op baseline update --no-config --fingerprint "$fp7" --status dismissed --reason "known" "$nights/night-07.log.gz"
check "dismissed on night 7" [ "$rc" = 0 ] && has .optipipe-baseline.json "$fp7"

op analyze --no-config --format json --show-suppressed --history h.db "$nights/night-08.log.gz"
cp out n8.json
check "night 8 is another app id" [ "$(field n8.json 'd["runs"][0]["id"]')" != "$(field n7.json 'd["runs"][0]["id"]')" ]
check "night 8's finding has night 7's fingerprint" [ "$(field n8.json "$config_fp")" = "$fp7" ]
check "...and stays dismissed" [ "$(field n8.json '[f.get("suppressed") for f in d["findings"] if f["rule"] == "spark.config"][0]')" = True ]
op analyze --no-config --history h.db "$nights/night-08.log.gz"
check "the text report hides it" has out "1 finding suppressed"
op history --history h.db show nightly-orders@latest --format json
check "the store keeps the decision with night 8's finding" [ "$(field out '[f["decision"] for f in d["findings"] if f["rule"] == "spark.config"][0]')" = dismissed ]
op history --history h.db runs nightly-orders
check "8 nights stored, one per app id" [ "$(grep -c application_ out)" = 8 ]

# what a rule sees on night 8
mkdir -p pack
cat >pack/nights.lua <<'LUA'
return { id = "team.nights", title = "Earlier nights", severity = "info", sources = { "spark" },
  check = function(run, ctx)
    local h, ids = ctx.history(run, { limit = 3 }), {}
    for i, e in ipairs(h) do ids[i] = e.id:sub(-4) .. "/" .. e.job end
    local all = ctx.history(run)
    ctx.report { message = ("%d of %d: %s"):format(#h, #all, table.concat(ids, " ")) }
    local ok1 = pcall(function() h[1].id = "x" end)
    local ok2 = pcall(function() h[1].nodes[1].metrics.x = 1 end)
    local ok3 = pcall(ctx.history, run, { limit = 1001 })
    ctx.report { message = ("writes %s %s; limit 1001 %s"):format(tostring(ok1), tostring(ok2), tostring(ok3)) }
  end }
LUA
op analyze --no-config --no-bundled --rules pack --history h.db "$nights/night-08.log.gz"
check "ctx.history: the job's earlier nights, newest first, limited" has out "3 of 7: 0307/nightly-orders 0306/nightly-orders 0305/nightly-orders"
check "history entries and their nodes are read-only; limit at most 1000" has out "writes false false; limit 1001 false"
finish
