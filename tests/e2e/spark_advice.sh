#!/usr/bin/env bash
# Advice that fits (issue #17), end to end through the bundled pack:
# no run's findings set one key to two values (core/findings.c reconciles
# them; the losing finding names the kept one), no change names a key the
# app's Spark version lacks, a stage whose partitions came from the code
# gets "repartition(N) in the code", and on the real logs (skipped with a
# notice when ../shared/real is absent): RAPIDS advice for a GPU OOM, the
# cancelled jobs folded into the failure, YARN executor losses as one
# finding, no what-if from a model that misses the measured time, Databricks
# workers instead of spark.executor.instances.
# Usage: spark_advice.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=${3:-$src/../shared/real}
. "$(dirname "$0")/lib/check.sh"

json() { "$bin" analyze --no-config --format json "$@" >"$tmp/out" 2>"$tmp/err"; }

# py CODE: runs CODE with d = the JSON report in $tmp/out, f = its findings
py() {
    python3 -c "import json,sys
d = json.load(open(sys.argv[1])); f = d['findings']
$1" "$tmp/out"
}

# one (run, target or node, key) never gets two values
NO_CONTRADICTION='
seen = {}
for x in f:
    for c in x["changes"]:
        k = (x["run"], c.get("target") or x.get("node"), c["key"])
        assert seen.setdefault(k, c["to"]) == c["to"], (k, seen[k], c["to"])'

# --- reconciliation: the emit test model proposes num-retained 3 and 5
op_emit() { "$bin" analyze --no-config --no-bundled --rules "$src/tests/e2e/emit/rules" --format json "$@"; }
op_emit "$src/tests/e2e/emit/model.json" >"$tmp/out" 2>"$tmp/err"
check "reconciled: one value per key" py "$NO_CONTRADICTION"
check "reconciled: the loser names the kept finding and why" py '
m = [x["message"] for x in f if "Not proposed" in x["message"]]
assert len(m) == 1, m
assert "Not proposed: execution.checkpointing.num-retained = 5, because emit.changes proposes 3 for the same setting and is kept: it is more severe." in m[0], m[0]'

# --- a Spark 1.6.1 RDD app whose 40 partitions come from repartition(40)
json "$src/fixtures/spark/repartition-1.6.json"
check "1.6 fixture: analyzed" py 'assert f'
check "1.6 fixture: no spark.sql.shuffle.partitions for a code-set stage" py '
assert not [c for x in f for c in x["changes"] if c["key"] == "spark.sql.shuffle.partitions"]'
check "1.6 fixture: repartition(N) in the code" py '
assert [x for x in f if "repartition(40) -> repartition(" in x.get("recommendation", "")]'
check "1.6 fixture: no key from 2.0 or later" py '
bad = ("spark.sql.files.maxPartitionBytes", "spark.sql.adaptive.", "spark.dynamicAllocation.shuffleTracking",
       "spark.dynamicAllocation.executorAllocationRatio", "spark.executor.memoryOverhead", "spark.decommission")
assert not [c["key"] for x in f for c in x["changes"] if c["key"].startswith(bad)]'

if [ ! -d "$real/spark" ]; then
    echo "NOTICE: $real/spark absent: real-log checks skipped"
    finish
    exit $?
fi
R=$real/spark

for log in "$R"/app-* "$R"/application_* "$R"/local-* "$R"/eventlog_v2_* \
    "$R"/spark-rapids-tools/* "$R"/platforms/*; do
    json "$log"
    check "$(basename "$log"): no contradicting changes" py "$NO_CONTRADICTION"
done

json "$R/platforms/gpu_oom_eventlog.zstd"
check "gpu: RAPIDS settings for GpuSplitAndRetryOOM, never the heap" py '
oom = [x for x in f if x["rule"] == "spark.failures" and "GpuSplitAndRetryOOM" in x["message"]]
assert oom
keys = {c["key"] for x in oom for c in x["changes"]}
assert "spark.rapids.sql.concurrentGpuTasks" in keys and "spark.executor.memory" not in keys, keys
assert all("JVM heap does not help" in x["recommendation"] for x in oom)'
check "gpu: the 4 cancelled jobs fold into the failure that stopped the context" py '
jobs = [x for x in f if x["rule"] == "spark.failures" and x.get("node", "").startswith("job-")]
assert len(jobs) == 1, [x["message"][:80] for x in jobs]
assert "Jobs 33, 34, 35, 36 were then cancelled because the SparkContext was shut down." in jobs[0]["message"]'
check "gpu: spill says it stayed in memory (0 B on disk)" py '
sp = [x for x in f if x["rule"] == "spark.spill"]
assert sp and all("0 B on disk: it stayed in memory" in x["message"] for x in sp)
assert not [c for x in sp for c in x["changes"] if c["key"] == "spark.executor.memory"]'

json "$R/application_1538416563558_0014"
check "yarn: 8 executors lost the same way are one finding with their task attempts" py '
fl = [x for x in f if x["rule"] == "spark.failures"]
assert len(fl) == 1, [x["message"][:80] for x in fl]
assert fl[0]["message"].startswith("8 executors were lost (1, 2, 3, 4, 5, 6, 7, 8): Container marked as failed")
assert "8 task attempts of stage 7" in fl[0]["message"]'
check "yarn: the stack trace: first line in the message, whole in the evidence" py '
x = [x for x in f if x["rule"] == "spark.failures"][0]
assert "\n" not in x["message"] and "\tat org.apache.hadoop.util.Shell" in x["evidence"]["reason"]'
check "what-if: the model (14.4 s) misses the measured 1m 13s: no executor count" py '
cp = [x for x in f if x["rule"] == "spark.critical-path"]
assert len(cp) == 1 and cp[0]["changes"] == [], cp
assert "puts the jobs at 14.4 s" in cp[0]["message"] and "beyond the 25% tolerance" in cp[0]["message"]'
"$bin" analyze --no-config "$R/application_1538416563558_0014" >"$tmp/text" 2>/dev/null
check "text report: no stack-trace lines" sh -c "! grep -q 'at org.apache.hadoop' '$tmp/text'"

json "$R/platforms/databricks_example_1"
check "databricks: workers, never spark.executor.instances or dynamic allocation" py '
keys = {c["key"] for x in f for c in x["changes"]}
assert "num_workers" in keys, keys
assert not [k for k in keys if k == "spark.executor.instances" or k.startswith("spark.dynamicAllocation")], keys'
check "databricks: Kryo only for the RDD part of the shuffle" py '
k = [x for x in f if "Java serialization" in x["message"]]
assert all("DataFrame/SQL shuffles do not use the serializer" in x["message"] for x in k)'

finish
