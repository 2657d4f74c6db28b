#!/usr/bin/env bash
# The advice an expert gives first (issue #26), end to end through the
# bundled pack on the shared real logs (skipped with a notice when
# ../shared/real is absent) and on the project's own fixtures:
# single-task stages named with their share of the job time, a write's
# driver-side commit named with its query, attempts that redid the work,
# a re-scan without a scan location said to be inferred, and every such
# finding carrying impact.time_saved_ms, so "Start here" ranks it by time.
# Usage: spark_expert.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=${3:-$src/../shared/real}
. "$(dirname "$0")/lib/check.sh"

json() { "$bin" analyze --no-config --pack spark --format json "$@" >"$tmp/out" 2>"$tmp/err"; }
py() {
    python3 -c "import json,sys
d = json.load(open(sys.argv[1])); f = d['findings']
def one(rule):
    x = [x for x in f if x['rule'] == rule]
    assert len(x) == 1, (rule, len(x))
    return x[0]
$1" "$tmp/out"
}

# --- fixtures: every new finding carries the time it would save --------------
fx=$src/fixtures/spark/expert
json "$fx/single-task.zstd" "$fx/commit-slow.zstd" "$fx/rescan-rdd.zstd" \
    "$fx/attempts-1.zstd" "$fx/attempts-2.zstd" "$fx/attempts-3.zstd"
check "fixtures: a JSON report" json_ok "$tmp/out"
check "fixtures: each new finding has impact.time_saved_ms > 0" py '
for r in ("spark.single-task-stages", "spark.commit-time", "spark.attempts", "spark.recomputation"):
    x = one(r)
    assert x.get("impact", {}).get("time_saved_ms", 0) > 0, (r, x.get("impact"))'
check "fixtures: no one-task stage gets a partition key from spark.small-tasks" py '
assert not [x for x in f if x["rule"] == "spark.small-tasks" and x["evidence"].get("tasks") == 1]'
"$bin" analyze --no-config --pack spark "$fx/single-task.zstd" >"$tmp/text" 2>&1
check "fixtures: the single-task stages lead Start here (largest time saved)" \
    sh -c "sed -n '/Start here/,/^$/p' '$tmp/text' | sed -n 2p | grep -q spark.single-task-stages"

# --- real logs ----------------------------------------------------------------
db=$real/spark/platforms/databricks_example_1
emr=$real/spark/platforms/emr_multiple_attempts
if [ -d "$db" ] && [ -d "$emr" ]; then
    json "$db"
    check "Databricks: 13 single-task stages, 71% of the job time on 1 of 256 cores" py '
x = one("spark.single-task-stages")
e = x["evidence"]
assert e["stages"] == 13 and e["cores"] == 256 and e["cause"] == "write", e
assert abs(e["share"] - 0.712) < 0.01, e
assert "13 stages of one task each took 35m 59s of the app" in x["message"], x["message"]'
    check "Databricks: the insert into a Hive table, 52 min of commit, Delta proposed" py '
x = one("spark.commit-time")
e = x["evidence"]
assert x["node"] == "sql-5" and e["command"] == "InsertIntoHiveTable", x
assert e["commit_ms"] > 50 * 60000 and e["jobs_ms"] < 5 * 60000, e
assert "Delta Lake" in x["recommendation"], x["recommendation"]
assert x["impact"]["time_saved_ms"] == e["commit_ms"]'
    json "$emr"
    check "EMR: four attempts that each finished all 5 jobs: the app ran 4 times" py '
x = one("spark.attempts")
e = x["evidence"]
assert e["attempts"] == 4 and e["redone_attempts"] == 3 and e["jobs_per_attempt"] == 5, e
assert x["message"].startswith("The app ran 4 times: attempts 1, 2, 3 each finished all 5 jobs (107 tasks)"), x["message"]
assert x["impact"]["time_saved_ms"] == e["earlier_attempts_ms"] > 120000'
else
    echo "notice: $real/spark/platforms absent: the real-log cases are skipped"
fi
finish
