#!/usr/bin/env bash
# The detections of issue #17 on real artifacts (../shared/real; skipped
# with a notice when absent):
#  - executor peaks equal the History Server's peakMemoryMetrics of the
#    same logs (executor list expectations), executor by executor;
#  - spark.sql-query finds the unpruned 13-partition scan of the Databricks
#    rollover example and stays quiet on the one-row nested-loop joins of
#    TPC-DS q88 (Photon);
#  - spark.recomputation stays quiet on the Databricks loop that reads one
#    table for 13 different days (not the same input);
#  - dbt.thread-utilization says that 3 threads were counted from the
#    thread names and how many nodes waited (BigQuery 1.7);
#  - every real dbt manifest given alone is analyzed as one static run
#    with all its entries (exit 0); their staging views are renames of
#    seeds and sources and chain at most 2 deep: dbt.materialization quiet.
#    (The firing cases are fixtures: rules/dbt/materialization_test.lua.)
# Usage: detect_real.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
real=${3:-}
. "$(dirname "$0")/lib/check.sh"

if [ -z "$real" ] || [ ! -d "$real" ]; then
    echo "NOTICE: real artifacts not found at '${real}': skipped"
    finish
    exit
fi
S=$real/spark
D=$real/dbt

# peaks_match LOG EXPECTATION: every executor's peakMemoryMetrics
peaks_match() {
    "$bin" normalize --format json "$1" >"$tmp/n.json" 2>"$E2E_ERR" || return 1
    python3 - "$tmp/n.json" "$2" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
ours = {p["executor_id"]: p for p in run["series"]["executor_peaks"]}
names = {"JVMHeapMemory": "peak_jvm_heap_bytes", "JVMOffHeapMemory": "peak_jvm_offheap_bytes",
         "OnHeapExecutionMemory": "peak_onheap_execution_bytes",
         "OnHeapStorageMemory": "peak_onheap_storage_bytes",
         "ProcessTreeJVMRSSMemory": "peak_jvm_rss_bytes", "MajorGCTime": "major_gc_ms"}
bad, n = [], 0
for e in json.load(open(sys.argv[2])):
    want = e.get("peakMemoryMetrics")
    if not want:
        continue
    got = ours.get(e["id"], {})
    for spark, model in names.items():
        n += 1
        if want.get(spark, 0) != got.get(model, 0):
            bad.append("%s %s: %s != %s" % (e["id"], spark, want.get(spark), got.get(model)))
print("\n".join(bad) or "%d values equal" % n)
sys.exit(1 if bad or n == 0 else 0)
PY
}
check "peaks = History Server (3.0 executors)" peaks_match "$S/application_1553914137147_0018" \
    "$S/expectations/executor_list_with_executor_metrics_json_expectation.json"
check "peaks = History Server (2.4 executors)" peaks_match "$S/application_1506645932520_24630151" \
    "$S/expectations/pre-SPARK-26329/executor_list_with_executor_metrics_json_expectation.json"
check "peaks = History Server (procfs RSS)" peaks_match "$S/application_1538416563558_0014" \
    "$S/expectations/pre-SPARK-26329/executor_list_with_executor_process_tree_metrics_json_expectation.json"

# findings RULE INPUT...: the json findings of RULE into $tmp/f.json
findings() {
    local rule=$1
    shift
    "$bin" analyze --format json "$@" >"$tmp/a.json" 2>"$E2E_ERR"
    [ $? -le 1 ] || return 1
    python3 - "$tmp/a.json" "$rule" >"$tmp/f.txt" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["rule"] == sys.argv[2]:
        print(f.get("node"), f["message"], json.dumps(f.get("evidence")))
PY
}
DB=$S/platforms/databricks_example_1
# SQL query 19 copies every partition of dec_tbl_a into table_z: nothing
# could prune it, so no partition-filter advice (issue #26; the label of a
# multi-line description is tested in rules/spark/sql-query_test.lua)
check "databricks: a full table copy gets no partition-filter advice" \
    eval 'findings spark.sql-query "$DB" && ! grep -q "dec_tbl_a read all" "$tmp/f.txt"'
check "databricks: 13 days of one table are no recomputation" \
    eval 'findings spark.recomputation "$DB" && [ ! -s "$tmp/f.txt" ]'
check "photon q88: one-row nested-loop joins are quiet" \
    eval 'findings spark.sql-query "$S/platforms/nds_q88_photon_db_13_3.zstd" && ! grep -q NestedLoop "$tmp/f.txt"'
check "photon: off-heap execution memory, no smaller heap" \
    eval 'findings spark.executor-memory "$S/platforms/nds_q88_photon_db_13_3.zstd" && [ ! -s "$tmp/f.txt" ]'

BQ17="$D/run_results.v5.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json $D/manifest.v11.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json"
check "dbt: inferred threads say so, and how many nodes waited" \
    eval 'findings dbt.thread-utilization $BQ17 && grep -q "All 3 threads (counted from the thread names) were busy 96% of the 56 s build while 48 ready nodes waited" "$tmp/f.txt" && grep -q "\"threads_inferred\": true" "$tmp/f.txt"'
# static_run MANIFEST: one run, manifest_only, every entry a node, exit 0
static_run() {
    "$bin" normalize --format json "$1" >"$tmp/n.json" 2>"$E2E_ERR" || return 1
    python3 - "$tmp/n.json" "$1" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
m = json.load(open(sys.argv[2]))
want = sum(len(m.get(k) or {}) for k in ("nodes", "sources", "exposures", "unit_tests"))
r = runs[0] if len(runs) == 1 else {}
ok = (len(runs) == 1 and r["metrics"].get("manifest_only") == 1
      and r["metrics"].get("executing") == 0 and len(r["nodes"]) == want
      and r["config"].get("optipipe.static") == "manifest")
print("%d runs, %d of %d nodes" % (len(runs), len(r.get("nodes", [])), want))
sys.exit(0 if ok else 1)
PY
}
for m in "$D"/manifest.*.json; do
    check "dbt manifest alone: $(basename "$m")" static_run "$m"
    check "dbt manifest alone, static checks quiet: $(basename "$m")" \
        eval 'findings dbt.materialization "$m" && [ ! -s "$tmp/f.txt" ]'
done
finish
