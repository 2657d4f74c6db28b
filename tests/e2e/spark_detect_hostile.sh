#!/usr/bin/env bash
# What spark_detect.c reads from a log, made hostile (issue #17): plans
# wider than 4096 operators and nested deeper than 256, SQL metric values
# and executor metrics of the wrong types, scopes that are not JSON. Each
# log must parse (no crash, no hang), keep what is valid and say what it
# left out with a run warning.
# Usage: spark_detect_hostile.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
. "$(dirname "$0")/lib/check.sh"

python3 - "$tmp" <<'PY'
import json, sys
sys.setrecursionlimit(10000)
d = sys.argv[1]
def log(name, extra):
    ev = [{"Event": "SparkListenerLogStart", "Spark Version": "3.3.2"},
          {"Event": "SparkListenerApplicationStart", "App Name": name, "App ID": name,
           "Timestamp": 1000, "User": "x"}] + extra + [
          {"Event": "SparkListenerApplicationEnd", "Timestamp": 9000}]
    with open("%s/%s.log" % (d, name), "w") as f:
        for e in ev:
            f.write((e if isinstance(e, str) else json.dumps(e)) + "\n")
def sql(i, plan):
    return {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
            "executionId": i, "description": "q", "details": "", "physicalPlanDescription": "",
            "sparkPlanInfo": plan, "time": 2000}
leaf = lambda n: {"nodeName": n, "simpleString": n, "children": [], "metadata": {},
                  "metrics": [{"name": "number of output rows", "accumulatorId": 7,
                               "metricType": "sum"}]}
wide = {"nodeName": "Union", "simpleString": "Union", "metadata": {}, "metrics": [],
        "children": [leaf("Scan x%d" % i) for i in range(5000)]}
deep = leaf("Scan deep")
for i in range(300):
    deep = {"nodeName": "Project", "simpleString": "Project", "children": [deep],
            "metadata": {}, "metrics": []}
log("wide", [sql(0, wide)])
log("deep", [sql(0, deep)])
odd = {"nodeName": 5, "simpleString": None, "children": "no", "metadata": [],
       "metrics": [{"name": "data size", "accumulatorId": "x"}, 3, None]}
log("types", [
    sql(0, odd), sql(1, {"nodeName": "Scan y", "simpleString": "s", "children": [],
                         "metadata": {"Location": 7, "PartitionFilters": "[]"},
                         "metrics": [{"name": "size of files read", "accumulatorId": 9,
                                      "metricType": "size"}]}),
    {"Event": "org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates",
     "executionId": 1, "accumUpdates": [[9, "12abc"], [9, 100], ["x", 1], [9], 5, [9, 1e300]]},
    {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate",
     "executionId": -4, "sparkPlanInfo": wide},
    {"Event": "SparkListenerStageExecutorMetrics", "Executor ID": "driver", "Stage ID": 0,
     "Stage Attempt ID": 0, "Executor Metrics": {"JVMHeapMemory": "big", "JVMOffHeapMemory": 5,
                                                 "MajorGCTime": {"a": 1}}},
    {"Event": "SparkListenerExecutorMetricsUpdate", "Executor ID": "3",
     "Metrics Updated": [], "Executor Metrics Updated": [{"Executor Metrics":
                                                          {"JVMHeapMemory": 77}}, 4]},
    {"Event": "SparkListenerStageSubmitted", "Stage Info": {
        "Stage ID": 0, "Stage Attempt ID": 0, "Stage Name": "s", "Number of Tasks": 1,
        "Parent IDs": [], "RDD Info": [
            {"RDD ID": 1, "Name": "FileScanRDD", "Scope": "{not json \"name\":\"Scan \\\"q\\\" t\"",
             "Parent IDs": [], "Storage Level": {"Use Memory": "yes"}},
            {"RDD ID": 2, "Name": "hdfs://a/b", "Scope": 5, "Parent IDs": "no"}, 7]}},
])
PY
out() { "$bin" normalize --format json "$tmp/$1.log" >"$tmp/$1.json" 2>"$tmp/$1.err"; }
q() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; sys.exit(0 if ($2) else 1)" "$tmp/$1.json"; }
E2E_OUT=$tmp/wide.json E2E_ERR=$tmp/wide.err
check "wide plan parses" out wide
check "wide plan: cut at 4096 operators, said" q wide 'r["nodes"][0]["metrics"]["operators"] == 4096 and any("more than 4096 operators" in w for w in r["warnings"])'
E2E_OUT=$tmp/deep.json E2E_ERR=$tmp/deep.err
check "deep plan parses" out deep
check "deep plan: cut at depth 256, said" q deep 'any("nested deeper than 256" in w for w in r["warnings"])'
E2E_OUT=$tmp/types.json E2E_ERR=$tmp/types.err
check "wrong types parse" out types
check "driver accumulator: numbers added, text and junk ignored" q types '[o for o in r["series"]["sql_operators"] if o["sql"] == "sql-1"][0]["files_bytes"] == 100'
check "driver accumulator: the text value is said, not counted as 0" q types 'any("SQL metric value is not a whole number" in w for w in r["warnings"])'
check "executor metrics: numbers kept, strings and objects ignored" q types '{p["executor_id"]: p for p in r["series"]["executor_peaks"]}["driver"].get("peak_jvm_offheap_bytes") == 5 and "peak_jvm_heap_bytes" not in {p["executor_id"]: p for p in r["series"]["executor_peaks"]}["driver"]'
check "heartbeat peaks" q types '{p["executor_id"]: p for p in r["series"]["executor_peaks"]}["3"]["peak_jvm_heap_bytes"] == 77'
check "scope that is not JSON: its name still read, unescaped" q types '[n for n in r["nodes"] if n["kind"] == "stage"][0]["attrs"]["scan"] == "Scan \"q\" t; hdfs://a/b"'
check "no SQL execution -4 from an adaptive update" q types 'not any(n["id"] == "sql--4" for n in r["nodes"])'
finish
