#!/usr/bin/env bash
# optipipe diff (docs/cli.md#diff, docs/history.md#diff): inputs against
# inputs for Spark, dbt and Flink; stored runs by JOB@previous, JOB@best,
# JOB@latest and a run id; the findings that are new, resolved or
# changed, of inputs and of stored runs; every output format (sarif/junit refused with
# the reason); bad references (unknown job, no store, several runs in one
# input) exit 2 naming the problem; `history runs --format html` draws the
# trend as inline SVG with no script. The text output of the nightly
# slowdown is compared with tests/golden/diff.text
# (OP_UPDATE_GOLDEN=1 rewrites it).
# Usage: diff.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=$tmp/out
E2E_ERR=$tmp/err
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
cd "$src" || exit 1 # relative paths: the refs in the output do not name $src
slow=fixtures/spark-nightly/slower
db=$tmp/s.db

# ---- inputs against inputs ----
op diff --no-config $slow/night-07.log.gz $slow/night-08.log.gz
check "spark: diff of two logs" [ "$rc" = 0 ]
check "...names the changed key" has "$tmp/out" "~ spark.executor.memory  *8g -> 4g"
check "...the resources" has "$tmp/out" "executors_max .* 4 -> 4"
check "...the run metrics with delta and ratio" has "$tmp/out" "jobs_wall_ms .*+13.5 s *1.5×"
check "...ranks the slower stage first of the stages" has "$tmp/out" \
    "stage:aggregate at Orders.scala:57#1 .* 3×"
golden=tests/golden/diff.text
if [ "${OP_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$tmp/out" "$golden"
    echo "updated $golden"
fi
check "text output matches $golden" cmp -s "$tmp/out" "$golden"

op diff --no-config fixtures/dbt/regression/run_results-2024-05-05.json \
    fixtures/dbt/regression/run_results-2024-05-06.json
check "dbt: the slow model first" has "$tmp/out" "^  model:fct_orders#1 .*7.3×"
check "...a model of one run only says so" has "$tmp/out" "fct_returns#1 (only in B)"
op diff --no-config fixtures/flink/healthy.json fixtures/flink/overprovisioned.json
check "flink: vertices matched by name with their parallelism" \
    has "$tmp/out" "vertex:Sink: JDBC orders_per_minute#1 .*parallelism 4 -> 32"
check "...and the total in the resources" has "$tmp/out" "parallelism_total .*16 -> 128"

# ---- every format ----
for fmt in json markdown html; do
    op diff -q --no-config --format "$fmt" $slow/night-07.log.gz $slow/night-08.log.gz
    check "--format $fmt" [ "$rc" = 0 ]
    check "...names the changed key" has "$tmp/out" "spark.executor.memory"
done
op diff -q --no-config --format json -o "$tmp/d.json" $slow/night-07.log.gz $slow/night-08.log.gz
check "json is JSON" json_ok "$tmp/d.json"
check "...with the node changes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
top = [n for n in d["nodes"] if n["kind"] == "stage"][0]
assert top["key"] == "stage:aggregate at Orders.scala:57#1", top
assert top["delta"] > 10000 and d["same_job"] is True
assert {"key": "spark.executor.memory", "change": "changed", "a": "8g", "b": "4g"} in d["config"]
' "$tmp/d.json"
op diff -q --no-config --format markdown $slow/night-07.log.gz $slow/night-08.log.gz
check "markdown has tables" has "$tmp/out" "^| name | A | B | change | ratio |"
op diff -q --no-config --format html $slow/night-07.log.gz $slow/night-08.log.gz
check "html: an inline SVG chart of the node changes" has "$tmp/out" '<svg data-chart="diff-nodes"'
check "...no script" sh -c "! grep -qi '<script' '$tmp/out'"
check "...a policy that allows none" has "$tmp/out" "default-src 'none'"
for fmt in sarif junit; do
    op diff --no-config --format $fmt $slow/night-07.log.gz $slow/night-08.log.gz
    check "--format $fmt is a usage error" [ "$rc" = 2 ]
    check "...saying which it takes" has "$tmp/err" "--format takes text, json, markdown or html, not '$fmt'"
done
op diff --no-config --top 1 $slow/night-07.log.gz $slow/night-08.log.gz
check "--top 1 lists one node" has "$tmp/out" "(1 listed;"
op diff --no-config --ignore-key 'spark.app.*' --ignore-key x $slow/night-07.log.gz $slow/night-08.log.gz
check "--ignore-key leaves the app id out" sh -c "! grep -q 'spark.app.id' '$tmp/out'"
check "...and says so" has "$tmp/out" "^config: 1 changed, 0 added, 0 removed, 1 ignored (--ignore-key)"
op diff --no-config --top 0 $slow/night-07.log.gz $slow/night-08.log.gz
check "--top 0 is a usage error" [ "$rc" = 2 ]

# ---- stored runs ----
for n in 01 02 03 04 05 06 07 08; do
    "$bin" analyze -q --no-config --no-baseline --history "$db" "$slow/night-$n.log.gz" >/dev/null 2>&1
done
op diff --no-config --history "$db" nightly-orders@previous nightly-orders@latest
check "JOB@previous against JOB@latest" [ "$rc" = 0 ]
check "...are nights 7 and 8" has "$tmp/out" "^A .*application_1700000000000_0207"
check "...B is night 8" has "$tmp/out" "^B .*application_1700000000000_0208"
check "...with the changed key" has "$tmp/out" "spark.executor.memory .*8g -> 4g"
check "...and the stage (nodes come from the store)" has "$tmp/out" \
    "stage:aggregate at Orders.scala:57#1 .* 3×"
best=$("$bin" history --history "$db" runs nightly-orders --format json | python3 -c '
import json, sys
runs = [r for r in json.load(sys.stdin)["runs"] if r["status"] == "succeeded"]
print(min(runs, key=lambda r: r["duration_ms"])["id"])')
OPTIPIPE_HISTORY=$db op diff --no-config nightly-orders@best application_1700000000000_0208
check "JOB@best (store from OPTIPIPE_HISTORY) is the fastest succeeded run" \
    has "$tmp/out" "^A .*($best)"
check "...a run id names B" has "$tmp/out" "^B .*application_1700000000000_0208"
op diff --no-config --history "$db" $slow/night-07.log.gz nightly-orders@latest
check "an input against a stored run" [ "$rc" = 0 ]
check "...of the same job" sh -c "! grep -q 'different jobs' '$tmp/err'"
op diff --no-config --history "$db" fixtures/dbt/regression nightly-orders@latest
check "runs of different jobs: a warning" has "$tmp/err" "runs of different jobs"

# ---- findings: new, resolved, changed (docs/history.md#findings-in-a-diff) ----
reg=fixtures/dbt/regression
op diff --no-config $reg/run_results-2024-05-05.json $reg/run_results-2024-05-06.json
check "findings: two new in B" has "$tmp/out" "^findings: 2 new, 0 resolved, 0 changed, 0 unchanged (A has 0, B 2)"
check "...each with severity, rule and node" has "$tmp/out" "^  + warning  dbt.cost  model.shop.fct_orders"
check "...and its message" has "$tmp/out" "^      fct_orders billed 345.6 GiB"
op diff --no-config $reg/run_results-2024-05-06.json $reg/run_results-2024-05-05.json
check "...the other way round they are resolved" has "$tmp/out" "^findings: 0 new, 2 resolved"
check "...marked -" has "$tmp/out" "^  - info     dbt.slow-models"
part=fixtures/spark-nightly/partitions
op diff -q --no-config --format json -o "$tmp/f.json" $part/night-01.log.gz $part/night-02.log.gz
check "a finding whose evidence moved is changed (json)" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
assert (f["a"], f["b"], f["unchanged"]) == (2, 2, 1), f
assert f["new"] == [] and f["resolved"] == [], f
c = f["changed"][0]
assert c["rule"] == "spark.shuffle-partitions" and c["changed"] == ["evidence"], c
assert {e["key"] for e in c["evidence_changes"]} >= {"bytes_per_task"}, c
' "$tmp/f.json"
op diff -q --no-config $part/night-01.log.gz $part/night-02.log.gz
check "...text says what moved" has "$tmp/out" \
    "^  ~ warning  spark.shuffle-partitions  stage-1-0: evidence bytes_per_task 4146 -> 4119"
op diff -q --no-config --format markdown $reg/run_results-2024-05-05.json $reg/run_results-2024-05-06.json
check "...markdown: a findings table" has "$tmp/out" '^| new | warning | ` dbt.cost ` | ` model.shop.fct_orders ` |'
op diff -q --no-config --format html $reg/run_results-2024-05-05.json $reg/run_results-2024-05-06.json
check "...html: a findings table" has "$tmp/out" '<tr><th scope="row">new</th><td>warning</td><td>dbt.cost</td>'
fdb=$tmp/f.db
for d in 05 06; do
    "$bin" analyze -q --no-config --no-baseline --history "$fdb" "$reg/run_results-2024-05-$d.json" >/dev/null 2>&1
done
op diff --no-config --history "$fdb" shop/build@previous shop/build@latest
check "stored runs: their stored findings compare" has "$tmp/out" "^findings: 2 new, 0 resolved"
op diff --no-config --history "$fdb" $reg/run_results-2024-05-06.json shop/build@latest
check "...an input against its stored self: all unchanged" has "$tmp/out" \
    "^findings: 0 new, 0 resolved, 0 changed, 2 unchanged"

# a rule that fails on an input side: its findings are missing, and said so
mkdir -p "$tmp/fpack"
cat >"$tmp/fpack/boom.lua" <<'LUA'
return {
  id = "fpack.boom", title = "fails", severity = "warning", sources = { "*" },
  check = function(bundle, ctx) error("boom") end,
}
LUA
printf 'return { rules_dirs = { "%s" } }\n' "$tmp/fpack" >"$tmp/boom.lua"
op diff -q --config "$tmp/boom.lua" $reg/run_results-2024-05-05.json $reg/run_results-2024-05-06.json
check "a rule that failed: exit 5, as analyze" [ "$rc" = 5 ]
check "...named on stderr, even with -q" has "$tmp/err" \
    "run_results-2024-05-06.json: rule fpack.boom failed (.*boom.*): its findings are missing from the diff"
check "...and in the findings heading" has "$tmp/out" "^findings: 2 new, .*; incomplete, rules failed: A fpack.boom (.*), B fpack.boom"
op diff -q --config "$tmp/boom.lua" --format json $reg/run_results-2024-05-05.json $reg/run_results-2024-05-06.json
check "...and in the json" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["findings"]["rule_errors"]
assert [x["rule"] for x in e["a"]] == ["fpack.boom"] == [x["rule"] for x in e["b"]], e
' "$tmp/out"

# ---- bad references ----
op diff --no-config --history "$db" nope@latest nightly-orders@latest
check "unknown job: exit 2" [ "$rc" = 2 ]
check "...naming the reference and the store" has "$tmp/err" "s.db: no stored run 'nope@latest'"
op diff --no-config --history "$db" nightly-orders@best application_9
check "unknown run id: exit 2" [ "$rc" = 2 ]
op diff --no-config nope@latest nightly-orders@latest
check "no store: exit 2" [ "$rc" = 2 ]
check "...saying how to name one" has "$tmp/err" "no run store to look it up in: give --history FILE"
op diff --no-config --history "$tmp/missing.db" a@latest b@latest
check "a store that does not exist: exit 2" [ "$rc" = 2 ]
check "...naming it" has "$tmp/err" "missing.db"
echo "not sqlite" >"$tmp/bad.db"
op diff --no-config --history "$tmp/bad.db" nightly-orders@latest $slow/night-08.log.gz
check "a file that is no run store: exit 2" [ "$rc" = 2 ]
check "...naming it and the reference" has "$tmp/err" "bad.db: not a run store.*(needed for 'nightly-orders@latest')"
echo garbage >"$tmp/garbage.json"
op diff --no-config "$tmp/garbage.json" $slow/night-08.log.gz
check "an input no plugin reads: exit 3" [ "$rc" = 3 ]
check "...naming it" has "$tmp/err" "garbage.json: warning: not recognized"
op diff --no-config fixtures/demo $slow/night-08.log.gz
check "an input with several runs: exit 2" [ "$rc" = 2 ]
check "...naming the runs found" has "$tmp/err" "holds 3 runs, diff needs one per side: dbt shop/build"
op diff --no-config $slow/night-08.log.gz
check "one side only: exit 2" [ "$rc" = 2 ]

# ---- hostile names: every format escapes what came from an input ----
mk_model() { # mk_model FILE DURATION: a model run with a crafted node name and key
    python3 - "$1" "$2" <<'PY'
import json, sys
name = '<script>alert(1)</script> | `x` \x1b[31mred\n# heading'
run = {"source": "model", "id": "r-" + sys.argv[2], "job": "hostile", "status": "succeeded",
       "duration_ms": int(sys.argv[2]), "config": {"k<img src=x>|": sys.argv[2]},
       "metrics": {}, "nodes": [{"id": "n1", "kind": "step", "name": name,
                                 "duration_ms": int(sys.argv[2])}]}
json.dump({"schema": 1, "runs": [run]}, open(sys.argv[1], "w"))
PY
}
mk_model "$tmp/h1.json" 1000
mk_model "$tmp/h2.json" 5000
op diff -q --no-config "$tmp/h1.json" "$tmp/h2.json"
check "hostile: the text has no escape character" sh -c "! grep -q \"\$(printf '\\033')\" '$tmp/out'"
check "...but the node" has "$tmp/out" "step:<script>alert(1)</script>"
op diff -q --no-config --format html "$tmp/h1.json" "$tmp/h2.json"
check "hostile html: escaped" has "$tmp/out" "&lt;script&gt;alert(1)&lt;/script&gt;"
check "...no tag from the input" sh -c "! grep -q '<script\|<img' '$tmp/out'"
op diff -q --no-config --format markdown "$tmp/h1.json" "$tmp/h2.json"
check "hostile markdown: | escaped in cells" has "$tmp/out" 'alert(1)</script> \\| '
check "...the name stays on its row" sh -c "! grep -q '^# heading' '$tmp/out'"
# a rule whose finding carries the hostile name in its message and evidence
mkdir -p "$tmp/hpack"
cat >"$tmp/hpack/echo.lua" <<'LUA'
return {
  id = "hpack.echo", title = "echoes a node name", severity = "warning",
  sources = { "*" },
  check = function(bundle, ctx)
    for _, r in ipairs(bundle.runs) do
      local n = r.nodes[1]
      ctx.report { run = r, node = n.id,
        message = ("slow %s in %d ms"):format(n.name, r.duration_ms),
        evidence = { name = n.name, ms = r.duration_ms } }
    end
  end,
}
LUA
printf 'return { rules_dirs = { "%s" } }\n' "$tmp/hpack" >"$tmp/hostile.lua"
op diff -q --config "$tmp/hostile.lua" "$tmp/h1.json" "$tmp/h2.json"
check "hostile finding: changed (its message and evidence moved)" \
    has "$tmp/out" "^  ~ warning  hpack.echo  n1: evidence ms 1000 -> 5000; message"
check "...the text has no escape character" sh -c "! grep -q \"\$(printf '\\033')\" '$tmp/out'"
op diff -q --config "$tmp/hostile.lua" --format html "$tmp/h1.json" "$tmp/h2.json"
check "...html: the message escaped" has "$tmp/out" "slow &lt;script&gt;alert(1)&lt;/script&gt;"
check "...no tag from the input" sh -c "! grep -q '<script\|<img' '$tmp/out'"
op diff -q --config "$tmp/hostile.lua" --format markdown "$tmp/h1.json" "$tmp/h2.json"
check "...markdown: | escaped in the findings table" has "$tmp/out" '^| changed | warning | ` hpack.echo ` | ` n1 ` | `` evidence ms 1000 -> 5000; message - slow <script>alert(1)</script> \\| `x`'
check "...the message's second line is not a heading" sh -c "! grep -q '^# heading' '$tmp/out'"

# ---- history runs --format html ----
op history --history "$db" runs nightly-orders --format html
check "history runs --format html" [ "$rc" = 0 ]
check "...an inline SVG trend" has "$tmp/out" '<svg data-chart="trend"'
check "...one point per run" [ "$(grep -c '<circle class="pt"' "$tmp/out")" = 8 ]
check "...with its data table" has "$tmp/out" "<td>2023-11-22 22:13 application_1700000000000_0208</td>"
check "...no script" sh -c "! grep -qi '<script' '$tmp/out'"
check "...nothing from elsewhere" sh -c "! grep -q 'src=\\|href=\\|url(' '$tmp/out'"
op history --history "$db" runs nightly-orders --format html --metric input_bytes
check "...of another metric" has "$tmp/out" "input_bytes of nightly-orders"
op history --history "$db" jobs --format html
check "html is for history runs only" [ "$rc" = 2 ]

finish
