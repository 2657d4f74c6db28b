#!/usr/bin/env bash
# Spark logs as platforms write them: platform / accelerator / Photon run
# attrs (docs/model-spark.md), Databricks rollover parts stitched into one
# run, attempts of one app read as one run with retries. On logs this
# project writes (fixtures/spark/gen_platforms.py) and on the real ones
# under REAL_DIR/spark/platforms (skipped with a notice when absent).
# Usage: spark_read.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=$3/spark/platforms
. "$(dirname "$0")/lib/check.sh"

gen="$src/fixtures/spark/gen_platforms.py"

# json_get FILE EXPR: evaluates a Python expression over the normalize
# output d (runs by id in R) and prints it.
json_get() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
R = {r["id"]: r for r in d["runs"]}
print(eval(sys.argv[2]))
EOF
}
is() { # is FILE EXPR EXPECTED
    local got
    got=$(json_get "$1" "$2" 2>&1)
    [ "$got" = "$3" ] || { echo "  $2 = $got, expected $3"; return 1; }
}

# --- platform, accelerator, Photon ----------------------------------------
python3 "$gen" platforms "$tmp/pf"
"$bin" normalize --format json "$tmp/pf" >"$tmp/pf.json" 2>"$tmp/err"
check "platform logs normalize" json_ok "$tmp/pf.json"
pf() { is "$tmp/pf.json" "R['$1']['attrs'].get('$2')" "$3"; }
check "databricks" pf app-20240101000000-0000 platform databricks
check "databricks cluster manager" pf app-20240101000000-0000 cluster_manager standalone
check "photon" pf app-20240101000000-0001 photon true
check "photon is databricks" pf app-20240101000000-0001 platform databricks
check "emr by -amzn- version" pf application_1700000000000_0007 platform emr
check "emr by spark.emr. keys" pf application_1700000000000_0008 platform emr
check "emr runs on yarn" pf application_1700000000000_0008 cluster_manager yarn
check "dataproc" pf application_1700000000000_0009 platform dataproc
check "kubernetes" pf spark-0a1b2c3d4e5f platform kubernetes
check "yarn" pf application_1700000000000_0010 platform yarn
check "standalone" pf app-20240101000000-0002 platform standalone
check "local" pf local-1700000000000 platform local
check "unknown platform is absent" pf some-app platform None
check "mesos is a cluster manager only" pf some-app cluster_manager mesos
check "gpu" pf app-20240101000000-0003 accelerator gpu
check "a look-alike plugin class is no gpu" pf app-20240101000000-0004 accelerator None
check "no photon without the tag" pf app-20240101000000-0000 photon None

# Rules see run.attrs.
mkdir -p "$tmp/rules"
cat >"$tmp/rules/pf.lua" <<'EOF'
return {
  id = "team.platform", title = "Names the platform", severity = "info",
  sources = { "spark" },
  check = function(run, ctx)
    if run.attrs.platform then
      ctx.report { message = "on " .. run.attrs.platform ..
                   (run.attrs.accelerator and " with " .. run.attrs.accelerator or "") }
    end
  end,
}
EOF
"$bin" analyze --format json --no-bundled --rules "$tmp/rules" "$tmp/pf/gpu.log" \
    "$tmp/pf/emr.log" >"$tmp/out" 2>"$tmp/err"
check "rules see run.attrs (gpu)" has "$tmp/out" '"on standalone with gpu"'
check "rules see run.attrs (emr)" has "$tmp/out" '"on emr"'
check "the JSON report's runs carry attrs" is "$tmp/out" \
    "[r.get('attrs',{}).get('platform') for r in d['runs']]" "['standalone', 'emr']"
# normalize's output reads back with its attrs (the model plugin)
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"schema": d["schema"], "runs": [r for r in d["runs"] if r["id"] == "spark-0a1b2c3d4e5f"]}))
' "$tmp/pf.json" >"$tmp/k8s.model.json"
"$bin" normalize --format json "$tmp/k8s.model.json" >"$tmp/back.json" 2>"$tmp/err"
check "run attrs read back from a model file" is "$tmp/back.json" \
    "d['runs'][0]['attrs']" "{'cluster_manager': 'kubernetes', 'platform': 'kubernetes'}"

# --- Databricks rollover: parts of one app by SparkContext Id ---------------
python3 "$gen" rollover "$tmp/ro"
one_app() { # one_app JSON: one run with every job, stage and task
    is "$1" "[(r['id'], r['engine_version'], r['metrics']['jobs'], r['metrics']['stages'], r['metrics']['tasks'], r['metrics']['orphan_task_ends']) for r in d['runs']]" \
        "[('app-20240101090000-0000', '3.1.2', 6, 6, 24, 0)]"
}
"$bin" normalize --format json "$tmp/ro/set" >"$tmp/ro.json" 2>"$tmp/err"
check "rollover folder: one run, every task (names sort against the order)" one_app "$tmp/ro.json"
check "rollover folder: the run is the folder" is "$tmp/ro.json" "d['runs'][0]['origins']" "['$tmp/ro/set']"
check "rollover folder: version from DBCEventLoggingListenerMetadata" is "$tmp/ro.json" \
    "d['runs'][0]['engine_version']" "3.1.2"
check "rollover: the context id (beyond 2^53) gives no out-of-range warning" \
    is "$tmp/ro.json" "[w for w in d['runs'][0]['warnings'] if 'range' in w]" "[]"
"$bin" normalize --format json "$tmp/ro/set/eventlog" "$tmp/ro/set/eventlog-2024-01-01--10-00.gz" \
    "$tmp/ro/set/eventlog-2024-01-01--09-00.gz" >"$tmp/ro2.json" 2>"$tmp/err"
check "rollover parts given as separate files, any order" one_app "$tmp/ro2.json"
"$bin" normalize --format json "$tmp/ro/concat.log" >"$tmp/ro3.json" 2>"$tmp/err"
check "rollover parts concatenated in one file" one_app "$tmp/ro3.json"
"$bin" normalize --format json "$tmp/ro/missing" >"$tmp/ro4.json" 2>"$tmp/err"
check "rollover: a missing part is named" has "$tmp/err" "Databricks rollover part 1 is missing (part 2 follows part 0)"
check "rollover: ... in the run's warnings" is "$tmp/ro4.json" \
    "sum('part 1 is missing' in w for w in d['runs'][0]['warnings'])" "1"
check "rollover: still one run" is "$tmp/ro4.json" "len(d['runs'])" "1"

# two apps' parts in one folder: two inputs, each named by its first part
mkdir -p "$tmp/two"
cp "$tmp/ro/set/eventlog" "$tmp/ro/set/eventlog-2024-01-01--10-00.gz" "$tmp/two/"
sed 's/3987391921526261116/111/; s/app-20240101090000-0000/app-2/' "$tmp/ro/concat.log" >"$tmp/two/other.log"
"$bin" analyze --format json --pack spark "$tmp/two" >"$tmp/two.json" 2>"$tmp/err"
check "two apps' parts in one folder: each its own input" is "$tmp/two.json" \
    "sorted((i['path'].split('/')[-1], i['runs']) for i in d['inputs'])" \
    "[('eventlog-2024-01-01--10-00.gz', ['app-20240101090000-0000']), ('other.log', ['app-2'])]"

# hostile metadata lines: huge numbers, missing fields, a cut line
printf '%s\n' '{"Event":"DBCEventLoggingListenerMetadata","Rollover Number":99999999999999999999999,"SparkContext Id":"x"}' \
    '{"Event":"DBCEventLoggingListenerMetadata"}' \
    '{"Event":"DBCEventLoggingListenerMetadata","Rollover Number":7,"SparkContext Id":12' \
    '{"Event":"DBCEventLoggingListenerMetadata","Rollover Number":2147483647,"SparkContext Id":99999999999999999999999999999999999999}' \
    '{"Event":"SparkListenerApplicationStart","App Name":"x","App ID":"app-1","Timestamp":1,"App Attempt ID":"99999999999999999999"}' \
    >"$tmp/hostile.log"
"$bin" normalize --format json "$tmp/hostile.log" >"$tmp/h.json" 2>"$tmp/err"
check "hostile metadata lines: read, one run" is "$tmp/h.json" "len(d['runs'])" "1"
check "hostile metadata lines: the cut one is malformed" has "$tmp/err" "line 3 is not valid JSON"

# --- attempts of one app: one run with retries --------------------------------
python3 "$gen" attempts "$tmp/att"
"$bin" normalize --format json "$tmp/att" >"$tmp/att.json" 2>"$tmp/err"
A="R['application_1700000000000_0042']"
check "attempts: one run named by the app id" is "$tmp/att.json" "[r['id'] for r in d['runs']]" \
    "['application_1700000000000_0042']"
check "attempts: analyzed from the last attempt" is "$tmp/att.json" \
    "($A['attrs']['attempt'], $A['attrs']['attempts'], $A['metrics']['jobs'], $A['status'])" \
    "('3', '3', 4, 'succeeded')"
check "attempts: earlier ones are failures of the app" is "$tmp/att.json" \
    "($A['metrics']['failed_attempts'], [a.get('status') for a in $A['series']['attempts']])" \
    "(2, ['failed', 'failed', None])"
check "attempts: end reasons" is "$tmp/att.json" \
    "[a.get('end_reason', '')[:20] for a in $A['series']['attempts']]" \
    "['job 1 failed: Job ab', 'the log ends without', '']"
check "attempts: not a history" is "$tmp/att.json" "('history' in $A, 'superseded' in $A)" "(False, False)"
check "attempts: an earlier attempt's warning is kept" is "$tmp/att.json" \
    "sum(w.startswith('attempt 2 (') for w in $A['warnings'])" "1"

# --- the real platform logs -------------------------------------------------
if [ -d "$real" ]; then
    "$bin" normalize --format json "$real/gpu_oom_eventlog.zstd" \
        "$real/nds_q88_photon_db_13_3.zstd" "$real/emr_multiple_attempts/attempt_1_eventlog.zstd" \
        >"$tmp/real.json" 2>"$tmp/err"
    check "real: gpu" is "$tmp/real.json" \
        "R['app-20250305192829-0000']['attrs']" \
        "{'accelerator': 'gpu', 'cluster_manager': 'standalone', 'platform': 'standalone'}"
    check "real: photon on databricks" is "$tmp/real.json" \
        "R['app-20240919162642-0000']['attrs']" \
        "{'cluster_manager': 'standalone', 'photon': 'true', 'platform': 'databricks'}"
    check "real: photon's version from DBCEventLoggingListenerMetadata" is "$tmp/real.json" \
        "R['app-20240919162642-0000']['engine_version']" "3.4.1"
    check "real: emr" is "$tmp/real.json" \
        "R['application_1724877841851_0016']['attrs'].get('platform')" "emr"
    "$bin" normalize --format json "$real/databricks_example_1" >"$tmp/db.json" 2>"$tmp/err"
    D="d['runs'][0]"
    check "real databricks rollover: one run" is "$tmp/db.json" "len(d['runs'])" "1"
    check "real databricks rollover: 72 jobs, 72 stages, 8247 tasks, no orphan" is "$tmp/db.json" \
        "[$D['metrics'][k] for k in ('jobs', 'stages', 'tasks', 'orphan_task_ends')]" "[72, 72, 8247, 0]"
    check "real databricks rollover: 8 executors x 32 cores" is "$tmp/db.json" \
        "($D['metrics']['executors_max'], $D['metrics']['executor_cores_max'])" "(8, 256)"
    check "real databricks rollover: about 104 min" is "$tmp/db.json" \
        "round($D['duration_ms'] / 60000)" "104"
    check "real databricks rollover: Spark 3.1.2 on databricks" is "$tmp/db.json" \
        "($D['engine_version'], $D['attrs']['platform'])" "('3.1.2', 'databricks')"
    "$bin" normalize --format json "$real/emr_multiple_attempts" >"$tmp/emr.json" 2>"$tmp/err"
    E="d['runs'][0]"
    check "real emr attempts: one run, attempt 4 analyzed" is "$tmp/emr.json" \
        "(len(d['runs']), $E['id'], $E['attrs']['attempt'], $E['attrs']['attempts'], $E['metrics']['failed_attempts'])" \
        "(1, 'application_1724877841851_0016', '4', '4', 3)"
    check "real emr attempts: 5 jobs, 107 tasks each" is "$tmp/emr.json" \
        "[(a['jobs'], a['tasks']) for a in $E['series']['attempts']]" "[(5, 107), (5, 107), (5, 107), (5, 107)]"
else
    echo "NOTICE: $real absent: the real platform logs were not checked"
fi

finish
