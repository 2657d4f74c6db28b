#!/usr/bin/env bash
# Issue 15's "Done when", end to end: nightly Spark runs of one app (a new
# app id each night, fixtures/spark-nightly written by its gen.py) analyzed
# night after night with a run store (analyze --history):
#   steady/     a finding dismissed on night 7 stays dismissed on night 8
#               (fingerprints keyed by the job, not the app id), the store
#               records the decision with night 8's finding, and rules see
#               nights 1-7 through ctx.history;
#   slower/     a stage 3x slower on night 8 with unchanged input is named by
#               spark.regression together with the config key that changed;
#   volume/     the same slowdown with 3x the input is called volume growth;
#   partitions/ an approved spark.sql.shuffle.partitions change applied on
#               night 8 is reported effective by mixed.change-outcome;
# and the rule-test harness records findings given for history inputs.
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

# ctx.node_history: the same values as walking ctx.history's nodes, newest
# first; runs = narrows to chosen entries; read-only; names checked
cat >pack/series.lua <<'LUA'
return { id = "team.series", title = "Node series", severity = "info", sources = { "spark" },
  check = function(run, ctx)
    local h = ctx.history(run, { limit = 3 })
    local s = ctx.node_history(run, { metric = { "no_such", "duration_ms" }, limit = 3 })
    local bad, n = 0, 0
    for id, list in pairs(s) do
      for i, v in ipairs(list) do
        n = n + 1
        if h[i].by_id[id].duration_ms ~= v then bad = bad + 1 end
      end
    end
    local two = ctx.node_history(run, { runs = { h[1], h[3] }, status = "succeeded" })
    local id, list = next(two)
    local ro = pcall(function() list[1] = 0 end)
    local ok, err = pcall(ctx.node_history, run, { metric = "x'; DROP TABLE runs; --" })
    local nd, key = h[1].nodes[1], nil
    for k, v in pairs(nd.metrics) do
      if math.type(v) == "integer" and (not key or k < key) then key = k end
    end
    local m = ctx.node_history(run, { metric = key, limit = 1 })[nd.id]
    local bad_entry = pcall(ctx.node_history, run, { runs = { 5 } })
    local made = setmetatable({}, { __index = function(_, k)  -- strings made on each read
      return k == "id" and h[2].id:sub(1) .. "" or h[2].source:sub(1) .. "" end })
    local via = ctx.node_history(run, { runs = { made }, metric = { "x", "y", "duration_ms" } })
    local _, vl = next(via)
    ctx.report { message = ("%d values, %d differ; runs: %d (%s, %s); writable: %s; bad name: %s; metric: %s; hostile: %s %s"):format(
      n, bad, #list, list[1] == h[1].by_id[id].duration_ms, list[2] == h[3].by_id[id].duration_ms,
      ro, tostring(err):match("a name of letters") or tostring(err), tostring(m and m[1] == nd.metrics[key]), bad_entry, vl and #vl) }
  end }
LUA
op analyze --no-config --no-bundled --rules pack --history h.db "$nights/night-08.log.gz"
tr -s ' \n' '  ' <out >flat # the text report wraps long messages
check "ctx.node_history: the values ctx.history's nodes have, newest first" grep -q "[1-9][0-9]* values, 0 differ" flat
check "ctx.node_history: runs = { h[1], h[3] } gives those two, in order" has flat "runs: 2 (true, true)"
check "ctx.node_history: read-only" has flat "writable: false"
check "ctx.node_history: a metric name is checked, never spliced into SQL" has flat "bad name: a name of letters"
check "ctx.node_history: a metric of the nodes' metrics" has flat "metric: true"
check "ctx.node_history: runs = a non-entry is an error, made-up strings are held" has flat "hostile: false 1"

# a stored finding keeps its evidence as reported
cat >pack/evidence.lua <<'LUA'
return { id = "team.evidence", title = "Stored evidence", severity = "info", sources = { "spark" },
  check = function(run, ctx)
    for _, f in ipairs(ctx.history(run, { limit = 1 })[1].findings) do
      if f.rule == "spark.config" then
        ctx.report { message = "evidence master=" .. tostring(f.evidence and f.evidence.master) }
      end
    end
  end }
LUA
op analyze --no-config --no-bundled --rules pack --history h.db "$nights/night-08.log.gz"
check "ctx.history: a stored finding's evidence" has out "evidence master=yarn"

# --- issue 15's other nights, each scenario in its own store -------------
nightly=$src/fixtures/spark-nightly

night() { printf '%s/%s/night-%02d.log.gz' "$nightly" "$1" "$2"; }

# analyze SCENARIO NIGHT: one night into the scenario's store, with its
# decisions file; the JSON report in out (and SCENARIO-NN.json).
analyze() {
    "$bin" analyze --no-config --format json --show-suppressed --history "$1.db" --baseline "$1.decisions.json" \
        "$(night "$1" "$2")" >out 2>err
    rc=$?
    cp out "$(printf '%s-%02d.json' "$1" "$2")"
}

# nights SCENARIO FIRST LAST: analyze each night in order.
nights() {
    local n
    for n in $(seq "$2" "$3"); do
        analyze "$1" "$n"
        [ "$rc" = 0 ] || return 1
    done
}

# pick JSON RULE [FIELD]: the first finding of RULE (FIELD of it, default
# the fingerprint), empty when none.
pick() {
    python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["rule"] == sys.argv[2]:
        print(f.get(sys.argv[3] if len(sys.argv) > 3 else "fingerprint", ""))
        break
EOF
}

# findings JSON RULE: "severity|suppressed|node|message" per finding of RULE.
findings() {
    python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["rule"] == sys.argv[2]:
        print("%s|%s|%s|%s" % (f["severity"], bool(f.get("suppressed")), f.get("node") or "-",
                               f["message"]))
EOF
}

stored_decision() { # stored_decision DB FINGERPRINT: the stored findings' decisions, oldest first
    python3 -c 'import sqlite3,sys; print(" ".join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT decision FROM findings WHERE fingerprint = ? ORDER BY run_pk", (sys.argv[2],))))' "$@"
}

decide() { # decide SCENARIO NIGHT FINGERPRINT STATUS
    "$bin" baseline update --no-config -o "$1.decisions.json" --fingerprint "$3" \
        --status "$4" --reason "nightly e2e" "$(night "$1" "$2")" >out 2>err
}

# --- a stage 3x slower, same input: the stage and the key -----------------
check "slower: nights 1-8 are recorded" nights slower 1 8
findings slower-08.json spark.regression >r8
check "slower: spark.regression names the stage" \
    grep -q "^warning|False|stage-1-0|Stage 'aggregate at Orders.scala:57' spent .* 3× its median" r8
check "slower: ... with the same input" has r8 'with the same input (1×'
check "slower: ... and the config key that changed" has r8 'spark.executor.memory 8g -> 4g'
check "slower: ... since the last good run (night 7)" has r8 'last good run application_1700000000000_0207'

# --- the same slowdown on 3x the input: volume growth ---------------------
check "volume: nights 1-8 are recorded" nights volume 1 8
findings volume-08.json spark.regression >r8
check "volume: spark.regression calls it volume growth" grep -q '^info|.*volume grew 3×' r8
check "volume: ... not a regression of the code" has r8 'Not a regression of the code'
check "volume: ... and gives no warning" sh -c '! grep -q "^warning" r8'

# --- an approved change applied on the next night: effective --------------
check "partitions: nights 1-7 are recorded" nights partitions 1 7
fp=$(pick partitions-07.json spark.shuffle-partitions)
check "partitions: night 7 proposes spark.sql.shuffle.partitions" test -n "$fp"
check "partitions: the change is approved" decide partitions 7 "$fp" approved
# the approval came after night 7 was recorded: night 8's analysis hands
# it to the rules (ctx.history) from its decisions file, and stores it
check "partitions: the stored findings are still undecided" \
    test "$(stored_decision partitions.db "$fp")" = "None None None None None None None"
analyze partitions 8
check "partitions: night 8 analyzed" test "$rc" = 0
findings partitions-08.json mixed.change-outcome >c8
check "partitions: mixed.change-outcome reports the change" \
    has c8 'The approved change spark.sql.shuffle.partitions 600 -> 16 (spark.shuffle-partitions finding'
check "partitions: ... effective, with the numbers" grep -q '^info|.*against a median of .*: effective\.$' c8
analyze partitions 8
findings partitions-08.json mixed.change-outcome >c8again
check "partitions: the same night analyzed again reports it once" test "$(wc -l <c8again)" = 1
check "partitions: night 8's analysis stored the approval on nights 1-7" \
    test "$(stored_decision partitions.db "$fp")" = "approved approved approved approved approved approved approved"

# --- the rule-test harness: findings of other rules on history inputs -----
mkdir -p pk
cat >pk/seen.lua <<'EOF'
return { id = "pk.seen", title = "t", severity = "info", sources = { "spark" },
  check = function(run, ctx)
    for _, h in ipairs(ctx.history(run)) do
      for _, f in ipairs(h.findings) do
        ctx.report { message = f.rule .. " " .. (f.decision and f.decision.status or "none") }
      end
    end
  end }
EOF
cat >pk/seen_test.lua <<EOF
local n7, n8 = "$(night steady 7)", "$(night steady 8)"
return { rule = "pk.seen", cases = {
  { name = "given findings are stored, with their decisions",
    history = { { input = n7, findings = { { rule = "x.other" } },
                  decisions = { { rule = "x.other", status = "approved" } } } },
    inputs = { n8 }, expect = { { message = "x.other approved" } } },
  { name = "a given finding needs a rule",
    history = { { input = n7, findings = { { node = "stage-1-0" } } } },
    inputs = { n8 }, expect = {} },
} }
EOF
"$bin" rules test pk >out 2>err
check "harness: a history entry's findings reach ctx.history" has out '^ok   pk.seen: given findings'
check "harness: ... and one without a rule fails the case, saying why" \
    has out 'FAIL pk.seen: a given finding needs a rule - history findings need a rule'

finish
