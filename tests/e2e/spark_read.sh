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
else
    echo "NOTICE: $real absent: the real platform logs were not checked"
fi

finish
