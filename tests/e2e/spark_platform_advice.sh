#!/usr/bin/env bash
# Advice judged by what the app ran on (issue #26), end to end through the
# bundled pack: one cluster shape, reconciled like keys (and --emit-changes
# writes one); code changes (numPartitions of a call site) reconciled like
# keys; Databricks rollover parts without their metadata line joined by
# name; a run without its beginning marked incomplete; and on the real logs
# (skipped with a notice when ../shared/real is absent): AQE not proposed
# where the platform or the log says it is on, no Kryo for SQL Exchange
# stages, executors lost after the work not "recomputed", a part alone
# marked incomplete.
# Usage: spark_platform_advice.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=${3:-$src/../shared/real}
. "$(dirname "$0")/lib/check.sh"

json() { "$bin" analyze --no-config --format json "$@" >"$tmp/out" 2>"$tmp/err"; }
norm() { "$bin" normalize --format json "$@" >"$tmp/out" 2>"$tmp/err"; }

# py CODE: runs CODE with d = the JSON in $tmp/out, f = its findings
py() {
    python3 -c "import json,sys
d = json.load(open(sys.argv[1])); f = d.get('findings', [])
$1" "$tmp/out"
}

# one (run, target or node, key) never gets two values, and one run never
# gets two choices of one change group
ONE_SHAPE='
seen, shape = {}, {}
for x in f:
    for c in x["changes"]:
        k = (x["run"], c.get("target") or x.get("node"), c["key"])
        assert seen.setdefault(k, c["to"]) == c["to"], (k, seen[k], c["to"])
        if c.get("group"):
            g = (x["run"], c["group"])
            assert shape.setdefault(g, c.get("choice")) == c.get("choice"), (g, shape[g], c)'

# --- code targets: a Spark 1.6.1 stage from repartition(40) --------------
json "$src/fixtures/spark/repartition-1.6.json"
check "1.6: one numPartitions for the call site, the other rule names it" py '
nc = [(x["rule"], c["to"]) for x in f for c in x["changes"] if c["key"] == "numPartitions"]
assert len(nc) == 1, nc
assert [x for x in f if "[Not proposed: numPartitions = " in x["message"]]'
check "1.6: no contradiction" py "$ONE_SHAPE"

# --- Databricks rollover parts without their metadata line --------------
python3 "$src/fixtures/spark/gen_platforms.py" rollover "$tmp/ro"
norm "$tmp/ro/nometa"
check "no metadata: the parts join by name into one run with every task" py '
r = d["runs"]
assert [(x["id"], x["metrics"]["tasks"]) for x in r] == [("app-20240101090000-0000", 24)], r
assert "incomplete" not in r[0]["attrs"]'
norm "$tmp/ro/nometa-missing"
check "no first part: one run, marked incomplete, said in a warning" py '
r = d["runs"]
assert len(r) == 1 and r[0]["attrs"]["incomplete"] == "no application start, no environment", r
assert any(w.startswith("incomplete: the log has no SparkListenerApplicationStart") for w in r[0]["warnings"])'

if [ ! -d "$real/spark" ]; then
    echo "NOTICE: $real/spark absent: real-log checks skipped"
    finish
    exit $?
fi
R=$real/spark

for log in "$R"/platforms/* "$R"/spark-rapids-tools/* "$R"/application_* "$R"/local-*; do
    json "$log"
    check "$(basename "$log"): one value per setting, one cluster shape" py "$ONE_SHAPE"
done

json "$R/platforms/databricks_example_1"
check "databricks: one cluster shape (num_workers), the alternative named, not proposed" py '
keys = sorted(c["key"] for x in f for c in x["changes"] if c.get("target") == "cluster")
assert keys == ["num_workers"], keys
assert [x for x in f if "Not proposed: autoscale.min_workers = 1, because spark.critical-path proposes num_workers = 3 instead (one cluster shape, not both)" in x["message"]]'
check "databricks 3.1: AQE is on (platform default), not proposed" py '
assert not [c for x in f for c in x["changes"] if c["key"] == "spark.sql.adaptive.enabled"]'
check "databricks: SQL Exchange stages without an execution id are no Kryo case" py '
assert not [x for x in f if "Java serialization" in x["message"]]'
"$bin" analyze --no-config --all --emit-changes "$tmp/emit" "$R/platforms/databricks_example_1" >/dev/null 2>"$tmp/err"
check "databricks --emit-changes: one cluster shape written" sh -c "
    n=\$(cat '$tmp'/emit/* | grep -c 'cluster: ')
    [ \"\$n\" = 1 ] && ! cat '$tmp'/emit/* | grep -q 'autoscale'"

json "$R/platforms/nds_q88_photon_db_13_3.zstd"
check "photon: the executor lost after the last task is not recomputed work" py '
x = [x for x in f if x["rule"] == "spark.failures"]
assert len(x) == 1 and x[0]["severity"] == "info" and x[0]["evidence"]["after_last_task"], x
assert "nothing was lost or recomputed" in x[0]["message"] and "recomputed;" not in x[0]["recommendation"]'

json "$R/platforms/gpu_oom_eventlog.zstd"
check "gpu: no executor count or allocation change" py '
bad = ("spark.executor.instances", "spark.dynamicAllocation.", "num_workers", "autoscale.")
assert not [c for x in f for c in x["changes"] if c["key"].startswith(bad)]'
check "gpu: the RAPIDS settings once, not repeated in every failure" py '
from collections import Counter
n = Counter((c["key"], c["to"]) for x in f for c in x["changes"] if c["key"].startswith("spark.rapids."))
assert n and max(n.values()) == 1, n'

json "$R/local-1642039451826"
check "local mode: nothing that needs a cluster" py '
bad = ("spark.executor.instances", "spark.dynamicAllocation.", "spark.shuffle.service.")
assert not [c for x in f for c in x["changes"] if c["key"].startswith(bad)]'

json "$R/spark-rapids-tools/aqeshuffle_eventlog.zstd"
check "AQE events in the log: AQE never proposed" py '
assert not [c for x in f for c in x["changes"] if c["key"] == "spark.sql.adaptive.enabled"]'

cp "$R/spark-rapids-tools/eventlog_v2_local-1623876083964/events_2_local-1623876083964.zstd" "$tmp/part2.zstd"
norm "$tmp/part2.zstd"
check "a real rolled part alone (starts with a TaskEnd): marked incomplete" py '
r = d["runs"]
assert len(r) == 1 and r[0]["attrs"].get("incomplete") == "no application start, no environment", r'

finish
