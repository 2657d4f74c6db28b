#!/usr/bin/env bash
# The Prometheus input (docs/inputs.md "Prometheus", docs/mapping-packs.md):
# the Prometheus project's parser conformance files read whole; escapes,
# NaN/Inf, timestamps, UTF-8 names and OpenMetrics' # EOF; query_range JSON;
# several scrapes as one time series in any order (counters give rates);
# the three Kafka Streams dialects give one model; the -1 restore sentinel
# is an attribute, not a value; bad lines and bad packs are named, the rest
# is read; series past the cap are refused and said, also when repeated.
# Usage: prometheus.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
cd "$tmp" || exit 1
fx=$src/fixtures/prometheus/conformance
ks=$src/fixtures/streaming
q() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. conformance files: every sample read (3809 sample lines, 9 of them
# OpenMetrics _created times), no error; nothing maps them: one run of the
# plugin's own source says so
"$bin" normalize --format json "$fx"/*.txt >conf.json 2>err
check "conformance files read without error (exit 0)" test $? = 0
E2E_OUT=conf.json
check "every sample counted" test "$(q conf.json 'd["runs"][0]["metrics"]["samples"]')" = 3800
check "unmapped series are counted and said" has err "no mapping pack knows the"
check "the unmapped run is the plugin's" test "$(q conf.json 'd["runs"][0]["source"]')" = prometheus

# 2. the format's corners, mapped by a user's pack
mkdir -p packs edge
cat >packs/edge.lua <<'EOF'
return { mapping = 1, name = "edge", engine = "edge-engine",
  run = { job = "{app}" },
  nodes = { part = { id = "{part}", attrs = { label = "{l}" } } },
  groups = { { prefix = "edge_", node = "part", metrics = {
    value = "value", ts = "ts_value", inf = "inf_value", nan = "nan_value",
    total = { name = "events", counter = true, rate = "events_per_s" },
    ["utf8.name"] = "utf8_value" } } } }
EOF
cat >edge/a-1764583200.om <<'EOF'
# HELP edge_value A help text with \\ and \n escapes.
# TYPE edge_value gauge
edge_value{app="e",part="p1",l="quote \" backslash \\ newline \n end"} 1.5e3
edge_value { app = "e" , part = "p2" , } 2
# TYPE edge_ts gauge
edge_ts{app="e",part="p1"} 7 1764583100.5
edge_inf{app="e",part="p1"} +Inf
edge_nan{app="e",part="p1"} NaN
# TYPE edge counter
edge_total{app="e",part="p1"} 100 # {trace_id="abc"} 1.0 1764583199.0
edge_created{app="e",part="p1"} 1764500000
{"edge_utf8.name",app="e",part="p1"} 3
# EOF
EOF
cat >edge/a-1764583260.prom <<'EOF'
edge_total{app="e",part="p1"} 160
EOF
"$bin" normalize --format json --mappings packs edge >edge.json 2>err
check "edge scrapes read (exit 0)" test $? = 0
E2E_OUT=edge.json
n1='[n for n in d["runs"][0]["nodes"] if n["id"]=="p1"][0]'
check "label escapes undone" test "$(q edge.json "$n1[\"attrs\"][\"label\"]==\"quote \\\" backslash \\\\ newline \\n end\"")" = True
check "a float value" test "$(q edge.json "$n1[\"metrics\"][\"value\"]")" = 1500
check "spaces around labels and a trailing comma" test "$(q edge.json '[n for n in d["runs"][0]["nodes"] if n["id"]=="p2"][0]["metrics"]["value"]')" = 2
check "+Inf and NaN are absent values" test "$(q edge.json "'inf_value' in $n1['metrics'] or 'nan_value' in $n1['metrics']")" = False
check "a UTF-8 quoted metric name" test "$(q edge.json "$n1[\"metrics\"][\"utf8_value\"]")" = 3
check "a counter's newest value" test "$(q edge.json "$n1[\"metrics\"][\"events\"]")" = 160
check "its rate over the scrapes (60 in 60 s)" test "$(q edge.json "$n1[\"metrics\"][\"events_per_s\"]")" = 1
check "an OpenMetrics timestamp (seconds) is kept" has edge.json '"t_ms": 1764583100500'
check "scrape times from the file names" test "$(q edge.json 'd["runs"][0]["attrs"]["scrape_time"]')" = "file names"

# 3. query_range JSON (what Grafana's query inspector saves)
cat >range.json <<'EOF'
{"status":"success","data":{"resultType":"matrix","result":[
 {"metric":{"__name__":"edge_total","app":"e","part":"p9","instance":"host:9090"},
  "values":[[1764583200,"10"],[1764583230,"40"],[1764583260,"5"]]}]}}
EOF
"$bin" normalize --format json --mappings packs range.json >range.out 2>err
check "query_range read (exit 0)" test $? = 0
E2E_OUT=range.out
# 10 -> 40 (+30), then 5: a restart (+5): 35 in 60 s
check "counter reset counted from zero" test "$(q range.out 'round(d["runs"][0]["nodes"][0]["metrics"]["events_per_s"], 4)')" = 0.5833
check "three samples" test "$(q range.out 'len(d["runs"][0]["series"]["samples"])')" = 3

# 4. Kafka Streams: three dialects, one model
for d in jmx strimzi micrometer; do
    "$bin" normalize --format json "$ks/kafka-streams-$d" >$d.json 2>$d.err
    check "$d scrapes read (exit 0)" test $? = 0
done
nodes() { q "$1" 'sorted((n["kind"], n["id"], sorted(n["metrics"].items()), sorted((k, v) for k, v in n["attrs"].items())) for n in d["runs"][0]["nodes"])'; }
check "jmx and strimzi give the same nodes" test "$(nodes jmx.json)" = "$(nodes strimzi.json)"
check "jmx and micrometer give the same nodes" test "$(nodes jmx.json)" = "$(nodes micrometer.json)"
E2E_OUT=jmx.json
check "the application id is the job" test "$(q jmx.json 'd["runs"][0]["job"]')" = orders-enricher
check "one instance" test "$(q strimzi.json 'd["runs"][0]["metrics"]["instances"]')" = 1
idle='[n for n in d["runs"][0]["nodes"] if n["id"].endswith("/0_1")][0]'
check "-1 is no value" test "$(q jmx.json "'restore_remaining_records' in $idle['metrics']")" = False
check "-1 is restore_state idle" test "$(q jmx.json "$idle['attrs']['restore_state']")" = idle
check "the idle flag in the samples" has jmx.json '"restore_state_idle": 1'
check "a standby task by its update metrics" test "$(q jmx.json '[n for n in d["runs"][0]["nodes"] if n["id"].endswith("/1_0")][0]["attrs"]["role"]')" = standby
check "the store inherits its task's role" test "$(q jmx.json '[n for n in d["runs"][0]["nodes"] if n["id"].endswith("/1_0/sessions-store")][0]["attrs"]["role"]')" = standby
check "restore_rate_counts unknown without a version (JMX)" test "$(q jmx.json 'd["runs"][0]["attrs"]["restore_rate_counts"]')" = unknown
check "batches before the fix (Micrometer kafka_version 3.9.1)" test "$(q micrometer.json 'd["runs"][0]["attrs"]["restore_rate_counts"]')" = batches
check "the version from Strimzi's version_info" test "$(q strimzi.json 'd["runs"][0]["engine_version"]')" = 4.1.1
check "one samples record per scrape and node" test "$(q jmx.json 'len(d["runs"][0]["series"]["samples"])')" = 24

# 5. the order of the files does not matter
files=$(ls "$ks"/kafka-streams-jmx/*.prom)
"$bin" normalize --format json $(echo "$files" | sort -r) >rev.json 2>err
check "scrapes in reverse order give the same nodes" test "$(nodes rev.json)" = "$(nodes jmx.json)"

# 6. a bad line is named; the rest of the file is read
printf 'edge_value{app="e",part="p1"} 1\nedge_value{app="e",part="p2" 2\nedge_value{app="e",part="p3"} 3\n' >bad.prom
"$bin" normalize --format json --mappings packs bad.prom >bad.json 2>err
E2E_OUT=err
check "the bad line is named with its file and line" has err 'bad.prom: line 2: '
check "the other lines were read" test "$(q bad.json 'len(d["runs"][0]["nodes"])')" = 2

# 6b. the series cap (500 000 per analysis): the series past it are
# refused, also when they come again (a refused series once named an
# index no series had, and its samples were written there)
python3 - <<'PY'
with open("cap.prom", "w") as f:
    for i in range(500003):
        f.write('cap_value{part="%d"} 1\n' % i)
    f.write('cap_value{part="500001"} 2\n' * 3)
PY
"$bin" normalize --format json cap.prom >cap.json 2>err
check "past the series cap: the file is read (exit 0)" test $? = 0
check "...the 3 series past it and their 3 repeats are refused, said" has err 'cap.prom: 6 samples were refused: the analysis holds at most 500000 series'
check "...every sample counted" test "$(q cap.json 'd["runs"][0]["metrics"]["samples"]')" = 500006

# 7. a broken pack is named; the other packs still map
mkdir -p badpacks
echo 'return { mapping = 1, name = "broken", engine = "x", run = { job = "{a:nosuchfilter}" }, groups = { { prefix = "x_", metrics = { y = "y" } } } }' >badpacks/broken.lua
"$bin" normalize --format json --mappings badpacks "$ks/kafka-streams-jmx" >bp.json 2>err
check "a bad template is an error naming the pack file" has err 'broken.lua: run.job: bad template'
check "the bundled packs still map" test "$(q bp.json 'd["runs"][0]["source"]')" = kafka-streams
"$bin" normalize --mappings no-such-dir "$ks/kafka-streams-jmx" >/dev/null 2>err
check "a missing --mappings folder is a usage error (exit 2)" test $? = 2

# 8. the kafka-streams engine's entry (plugins/kafka-streams/host): its
# state store chart and CSS in the HTML report
"$bin" analyze --format html -o ks.html "$ks/kafka-streams-jmx" >/dev/null 2>err
E2E_OUT=ks.html
check "the state store chart" has ks.html 'kafka-streams-stores'
check "its CSS class" has ks.html 'svg .kafka-streams-active'

finish
