#!/usr/bin/env bash
# End-to-end tests of `optipipe fetch flink` against a fake JobManager on
# loopback that serves the recorded responses of every Flink fixture: the
# export fetched from it must analyze to the same findings as the fixture;
# job discovery; backpressure answered "deprecated" at first; `analyze
# URL`; the progress line on a terminal.
# Usage: fetch_flink.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout

same_findings() { python3 "$src/tests/fetch/same_findings.py" "$1" "$2"; }

# OP_TEST_PART=K/P (tests/CMakeLists.txt OP_E2E_PARTS: P ctest tests at
# once): part 0 runs the sections after the fixture loop, parts 1..P-1
# share the fixtures; unset, one run does everything.
part=${OP_TEST_PART:-0/1}
pk=${part%/*} pn=${part#*/}
mine() { [ "$pn" -le 1 ] || { [ "$pk" != 0 ] && [ $(($1 % (pn - 1) + 1)) = "$pk" ]; }; }
rest() { [ "$pk" = 0 ]; }

# --- every fixture: fetched export == fixture, finding for finding ---------
names=""
fetch_fixture() { # fetch_fixture NAME JOB SAMPLES: the export and both analyses
    local name=$1 jid=$2 nsamples=$3 fx="$src/fixtures/flink/$1.json"
    [ -e "$fx" ] || fx="$src/fixtures/demo/$name.json"
    echo "$fx" >"$tmp/$name.src"
    start_server flink "$fx"
    run fetch flink "$url" --job "$jid" --samples "$nsamples" --interval 0 \
        --backpressure-wait 0 -o "$tmp/$name.export.json"
    check "$name: fetch exits 0" test "$rc" = 0
    stop_server
    "$bin" analyze --format json --deterministic "$fx" >"$tmp/$name.fixture.json" 2>/dev/null
    "$bin" analyze --format json --deterministic "$tmp/$name.export.json" \
        >"$tmp/$name.fetched.json" 2>/dev/null
    names="$names $name"
}
python3 "$src/tests/fetch/check_exports.py" list \
    "$src"/fixtures/flink/*.json "$src"/fixtures/demo/flink-*.json >"$tmp/fixtures"
i=0
while read -r name jid nsamples; do
    if mine "$i"; then fetch_fixture "$name" "$jid" "$nsamples"; fi
    i=$((i + 1))
done <"$tmp/fixtures"
if rest; then # what the sections below read, when another part has it
    for need in checkpoint-phases-async source-bound-8-partitions; do
        [ -e "$tmp/$need.export.json" ] || fetch_fixture $(grep "^$need " "$tmp/fixtures")
    done
fi
check "every fixture was fetched" test -n "$names"
# shellcheck disable=SC2086
python3 "$src/tests/fetch/check_exports.py" check "$tmp" $names >"$tmp/checks"
while read -r verdict what; do
    case $verdict in
    PASS) pass=$((pass + 1)) ;;
    FAIL) fail=$((fail + 1)); echo "FAIL: $what" ;;
    *) echo "$verdict $what" ;;
    esac
done <"$tmp/checks"
rest || { finish; exit; }

# --- per-subtask checkpoint details: the phases of the newest checkpoints ---
phases_ex="$tmp/checkpoint-phases-async.export.json"
check "subtask details of the 3 newest completed checkpoints are fetched" \
    test "$(json_get "$phases_ex" 'len(set(k.split("/")[5] for k in d["responses"] if "/subtasks/" in k and "/details/" in k))')" = 3
check "...for every vertex the JobManager has them for (2 of 4: the others 404)" \
    test "$(json_get "$phases_ex" 'sum(1 for k in d["responses"] if "/subtasks/" in k and "/details/" in k)')" = 6
check "...only in the first poll" \
    test "$(json_get "$phases_ex" 'sum(1 for s in d.get("samples", []) for k in s["responses"] if "/details/" in k and "/subtasks/" in k)')" = 0
check "...and they give the phase finding" has "$tmp/checkpoint-phases-async.fetched.json" "flink.checkpoint-phases"

healthy="$src/fixtures/flink/healthy.json"
bottleneck="$src/fixtures/flink/window-bottleneck.json"
hjid=$(job_of "$healthy")
bjid=$(job_of "$bottleneck")

# --- a Kafka source: partition offsets (poll 0), consumer and emit lag --------
parts_ex="$tmp/source-bound-8-partitions.export.json"
offsets='sum(k.count("currentOffset") for k in %s if "/metrics?get=" in k)'
check "the 8 partition offset names of the source are requested" \
    test "$(json_get "$parts_ex" "$(printf "$offsets" 'd["responses"]')")" = 8
check "...in the first poll only" \
    test "$(json_get "$parts_ex" "$(printf "$offsets" '[k for s in d["samples"] for k in s["responses"]]')")" = 0
check "records-lag-max is requested" has "$parts_ex" 'KafkaConsumer.records-lag-max'
check "currentEmitEventTimeLag is requested" has "$parts_ex" 'Source__Kafka_orders.currentEmitEventTimeLag'
check "...and the fetched export counts 8 partitions" \
    has "$tmp/source-bound-8-partitions.fetched.json" '"partitions": 8'

start_server flink "$src/fixtures/flink/source-bound-8-partitions.json"
run fetch flink "$url" --interval 0 --backpressure-wait 0 --max-metric-names 10 \
    -o "$tmp/parts-cap.json"
check "partition names count against --max-metric-names: exit 4" test "$rc" = 4
check "...the ones past the cap are named under errors" \
    has "$tmp/parts-cap.json" '7 metric names left out (over --max-metric-names 10 per vertex): 1.Source__Kafka_orders.KafkaSourceReader.topic.orders.partition.1.currentOffset'
stop_server

# --- a metric name with a comma cannot be asked for (?get= splits on commas) --
start_server flink "$healthy" --extra-name 'Source__a,b.pendingRecords' \
    --extra-name 'Source__c.pendingRecords'
run fetch flink "$url" --interval 0 --backpressure-wait 0 -o "$tmp/comma.json"
check "a name with a comma: exit 4 (incomplete)" test "$rc" = 4
check "...stderr says why it was left out" has "$tmp/err" "a comma in the name"
check "...the export names it under errors" has "$tmp/comma.json" 'Source__a,b.pendingRecords'
check "...it is not requested" \
    test "$(json_get "$tmp/comma.json" 'sum(1 for k in d["responses"] if "Source__a" in k)')" = 0
check "...the other names of the listing still are" \
    test "$(json_get "$tmp/comma.json" 'sum(1 for k in d["responses"] if "Source__c.pendingRecords" in k)')" -gt 0
stop_server

# --- discovery -------------------------------------------------------------
start_server flink "$healthy"
run fetch flink "$url/" --interval 0 -o "$tmp/disc.json"
check "the only running job is found without --job" test "$rc" = 0
check "...and fetched" has "$tmp/disc.json" "\"/jobs/$hjid\""
check "no job overview in the export (it would add runs)" lacks "$tmp/disc.json" '"/jobs/overview"'
check "base_url is recorded" has "$tmp/disc.json" "\"base_url\": \"$url\""
run fetch flink "$url" --job 0123456789abcdef0123456789abcdef -o "$tmp/none.json"
check "an unknown --job exits 3" test "$rc" = 3
check "...says not found and lists the jobs" has "$tmp/err" "not found"
check "...naming the running job" has "$tmp/err" "$hjid"
check "...and writes nothing" test ! -e "$tmp/none.json"
run fetch flink "$url" --job 'x/../../etc' -o "$tmp/none.json"
check "a --job that is no id is a usage error" test "$rc" = 2
run fetch flink "$url" --job "$hjid" -q
check "without -o the export goes to stdout" has "$tmp/out" '"flink_rest_export": 1'
check "-q keeps stderr empty" test ! -s "$tmp/err"
stop_server

start_server flink "$healthy" "$bottleneck"
run fetch flink "$url" -o "$tmp/two.json"
check "two running jobs without --job exit 2" test "$rc" = 2
check "...listing both" has "$tmp/err" "$bjid"
check "...and suggesting --all-running" has "$tmp/err" "all-running"
run fetch flink "$url" --all-running --backpressure-wait 0 -o "$tmp/two.json"
check "--all-running exits 0" test "$rc" = 0
check "...with the first job" has "$tmp/two.json" "\"/jobs/$hjid\""
check "...and the second" has "$tmp/two.json" "\"/jobs/$bjid\""
run analyze --format json "$tmp/two.json"
check "the two-job export analyzes" test "$rc" = 0
check "...into two runs" test "$(json_get "$tmp/out" 'len(d["runs"])')" = 2
run fetch flink "$url" --all-running --job "$hjid"
check "--job with --all-running is a usage error" test "$rc" = 2
stop_server

# --- backpressure: "deprecated" until Flink has the metrics ------------------
start_server flink "$bottleneck" --deprecated 2
run fetch flink "$url" --backpressure-wait 0 -o "$tmp/bp.json"
check "deprecated backpressure: exit 0" test "$rc" = 0
check "...asked again until ok" \
    test "$(json_get "$tmp/bp.json" 'sum(1 for k, v in d["responses"].items() if k.endswith("/backpressure") and v.get("status") != "ok")')" = 0
"$bin" analyze --format json --deterministic "$bottleneck" >"$tmp/a.json" 2>/dev/null
"$bin" analyze --format json --deterministic "$tmp/bp.json" >"$tmp/b.json" 2>/dev/null
same_findings "$tmp/a.json" "$tmp/b.json" >"$tmp/out" 2>&1
rc=$?
check "...and the findings are the fixture's" test "$rc" = 0
stop_server
start_server flink "$bottleneck" --deprecated 100
run fetch flink "$url" --backpressure-wait 0 -o "$tmp/bp.json"
check "backpressure never ready: still exit 0 (Flink's own answer)" test "$rc" = 0
check "...the last answer is kept" \
    test "$(json_get "$tmp/bp.json" 'sum(1 for k, v in d["responses"].items() if k.endswith("/backpressure") and v.get("status") == "deprecated")')" -gt 0
stop_server

# --- analyze http://... (cli/main.c) -----------------------
start_server flink "$bottleneck"
run analyze --format json --deterministic "$url" --job "$bjid"
if [ "$rc" = 2 ] && grep -q -- "--job" "$tmp/err"; then
    echo "NOTE: analyze does not take URLs yet (core/analyze.c wiring): skipped"
else
    check "analyze URL exits 0" test "$rc" = 0
    cp "$tmp/out" "$tmp/b.json"
    "$bin" analyze --format json --deterministic "$bottleneck" >"$tmp/a.json" 2>/dev/null
    same_findings "$tmp/a.json" "$tmp/b.json" >"$tmp/out" 2>&1
    rc=$?
    check "analyze URL finds what the fixture holds" test "$rc" = 0
fi
stop_server

# --- progress on a terminal -------------------------------------------------
start_server flink "$healthy"
python3 - "$bin" "$url" "$tmp/tty.json" >"$tmp/out" 2>"$tmp/err" <<'EOF'
import os, subprocess, sys
try:
    master, slave = os.openpty()
except OSError:
    sys.exit(77)  # no pseudo-terminals here
p = subprocess.run([sys.argv[1], "fetch", "flink", sys.argv[2], "--samples", "1",
                    "--interval", "0", "-o", sys.argv[3]],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=slave, timeout=120)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode("utf-8", "replace"))
sys.exit(p.returncode)
EOF
rc=$?
if [ "$rc" = 77 ]; then
    echo "NOTE: no pseudo-terminal available: progress checks skipped"
else
    check "progress run exits 0" test "$rc" = 0
    check "progress names the endpoint on a terminal" has "$tmp/out" "GET /jobs/$hjid"
    check "progress counts the samples" has "$tmp/out" "sample 1 of 1"
fi
run fetch flink "$url" --samples 1 --interval 0 -o "$tmp/notty.json"
check "no progress when stderr is no terminal" lacks "$tmp/err" "sample 1 of 1"
stop_server

finish
