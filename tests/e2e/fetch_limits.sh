#!/usr/bin/env bash
# End-to-end tests of the limits a server cannot push `optipipe fetch`
# past: metric names per vertex (--max-metric-names), the request budget
# (--max-requests), the deadline of the whole fetch (--max-time), the
# minimum download rate (--min-rate over --min-rate-time), redirects that
# keep the scheme, the zip compression-ratio caps, and no temporary file
# left behind by SIGTERM / SIGINT. Every run is bounded by a `timeout`
# far above the limit under test, so only a hang fails on time.
# Usage: fetch_limits.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=${3:-}
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout

fx="$src/fixtures/flink/window-bottleneck.json"
jid=$(job_of "$fx")
app="app-20240101000000-0001"
skew="$src/fixtures/spark/skew.zstd"
logs="/api/v1/applications/$app/logs"

errors_of() { json_get "$1" '"\n".join(e["path"] + ": " + e["error"] for e in d.get("errors", []))'; }
served() { python3 -c 'import json,sys,urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1] + "/__stats"))["requests"])' "$url"; }
leftovers() { find "$1" -name '.optipipe-*' 2>/dev/null | head -1; }

# --- metric names per vertex ---------------------------------------------------
# 5000 wanted names on every vertex: without a cap some 380 requests.
start_server flink "$fx" --extra-metrics 5000
n0=$(served)
run fetch flink "$url" -o "$tmp/names.json"
n1=$(served)
check "5000 names per vertex: exit 4 (incomplete)" test "$rc" = 4
check "...at most ~100 requests (cap 2048 names per vertex)" test $((n1 - n0)) -lt 150
check "...stderr says names were left out" has "$tmp/err" "metric names left out (over --max-metric-names 2048 per vertex)"
errors_of "$tmp/names.json" >"$tmp/names.err"
check "...the export names every name left out" has "$tmp/names.err" "Op4999.pendingRecords"
check "...under the listing's path" has "$tmp/names.err" "/vertices/[0-9a-f]*/subtasks/metrics: 2954 metric names left out"
run fetch flink "$url" --max-metric-names 100000 -o "$tmp/names2.json"
check "--max-metric-names 100000: nothing left out" lacks "$tmp/err" "left out"

# --- the request budget ----------------------------------------------------------
n0=$(served)
run fetch flink "$url" --max-requests 20 -o "$tmp/budget.json"
n1=$(served)
check "--max-requests 20: exit 4, the rest written" test "$rc" = 4 -a -s "$tmp/budget.json"
check "...20 requests served" test $((n1 - n0)) -le 20
check "...stderr says the budget is spent" has "$tmp/err" "the budget of 20 requests (--max-requests) is spent"
errors_of "$tmp/budget.json" >"$tmp/budget.err"
check "...the requests not made are listed" has "$tmp/budget.err" "/watermarks: not requested: the budget of 20"
run analyze "$tmp/budget.json"
check "...and the export analyzes" test "$rc" = 0
run fetch flink "$url" --max-requests 1 -o "$tmp/budget1.json"
check "--max-requests 1: nothing usable, exit 3" test "$rc" = 3
check "...saying why" has "$tmp/err" "nothing usable: not requested: the budget of 1"
check "...writing no file" test ! -e "$tmp/budget1.json"
run analyze "$url" --max-requests 20
check "analyze URL takes --max-requests too" test "$rc" = 0
check "...and warns what is missing" has "$tmp/err" "not requested: the budget of 20"
stop_server

# --- the deadline -------------------------------------------------------------------
start_server flink "$fx" --fail "trickle:/jobs/$jid/plan"
timeout 60 "$bin" fetch flink "$url" --max-time 3 -o "$tmp/slow.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a trickling /plan, --max-time 3: exit 4 (not a hang)" test "$rc" = 4
check "...the request is cut at the deadline" has "$tmp/err" "/plan: stopped at the deadline of 3 s (--max-time)"
errors_of "$tmp/slow.json" >"$tmp/slow.err"
check "...what was not requested is listed" has "$tmp/slow.err" "/checkpoints: not requested: the deadline of 3 s"
check "...what came before is kept" test "$(json_get "$tmp/slow.json" '"/jobs/'"$jid"'" in d["responses"]')" = True
timeout 60 "$bin" analyze "$url" --max-time 3 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "analyze URL --max-time 3 ends too" test "$rc" = 0
stop_server

start_server flink "$fx"
timeout 60 "$bin" fetch flink "$url" --samples 3 --interval 30 --max-time 3 -o "$tmp/samples.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "samples past the deadline: exit 4 (not a 90 s wait)" test "$rc" = 4
errors_of "$tmp/samples.json" >"$tmp/samples.err"
check "...the samples not taken are listed" has "$tmp/samples.err" "(samples 1 to 3): not requested: the deadline of 3 s"

# --- redirects ----------------------------------------------------------------------
other=$url
other_pid=$last_pid
start_server flink "$fx" --fail "redirect:/jobs/$jid/checkpoints/config" --redirect-base "$other" \
    --fail "redirect-scheme:/jobs/$jid/config"
run fetch flink "$url" -o "$tmp/redir.json"
check "redirects: exit 4 (one refused)" test "$rc" = 4
check "...one to another local port is followed" test "$(json_get "$tmp/redir.json" '"/jobs/'"$jid"'/checkpoints/config" in d["responses"]')" = True
check "...one to https is not" test "$(errors_of "$tmp/redir.json" | cut -d: -f1)" = "/jobs/$jid/config"
check "...saying so" has "$tmp/err" "redirected to another scheme"
stop_server
stop_server_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# --- Spark: a trickling download ------------------------------------------------------
start_server spark --app "$app" --file "$app.zstd=$skew" --fail "trickle:$logs"
run_bounded() { timeout 60 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
run_bounded fetch spark-history "$url" --app "$app" --max-time 3 -o "$tmp/trickle1"
check "a trickling zip, --max-time 3: exit 3" test "$rc" = 3
check "...cut at the deadline" has "$tmp/err" "stopped at the deadline of 3 s"
check "...no temporary file left" test -z "$(leftovers "$tmp/trickle1")"
run_bounded fetch spark-history "$url" --app "$app" --min-rate-time 2 --retries 0 -o "$tmp/trickle2"
check "a trickling zip under --min-rate: exit 3" test "$rc" = 3
check "...too slow for --min-rate 1024" has "$tmp/err" "(--min-rate 1024 over --min-rate-time 2 s)"
check "...no temporary file left" test -z "$(leftovers "$tmp/trickle2")"

# killed while downloading (--min-rate-time 3600: the trickle lasts until
# the kill, however slow the machine)
kill_fetch() { # kill_fetch SIGNAL DIR : starts the fetch, kills it mid-download
    local sig=$1 dir=$2 pid
    # a background job of a script ignores SIGINT: the wrapper restores it
    python3 -c 'import os,signal,sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' timeout 300 "$bin" fetch spark-history \
        "$url" --app "$app" --min-rate-time 3600 -o "$dir" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    _leftover() { [ -n "$(leftovers "$dir")" ]; }
    wait_until _leftover
    had=$(leftovers "$dir")
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
}
kill_fetch TERM "$tmp/killed"
check "SIGTERM during the download: the download file existed" test -n "$had"
check "...the fetch dies of SIGTERM" test "$rc" = 143
check "...and leaves no .optipipe-logs-*" test -z "$(leftovers "$tmp/killed")"
kill_fetch INT "$tmp/interrupted"
check "SIGINT during the download: the download file existed" test -n "$had"
check "...the fetch dies of SIGINT" test "$rc" = 130
check "...and leaves no .optipipe-logs-*" test -z "$(leftovers "$tmp/interrupted")"
stop_server

# --- Spark: compression ratio ---------------------------------------------------------
start_server spark --app "$app" --file "$app.zstd=$skew" --bomb $((64 << 20))
run fetch spark-history "$url" --app "$app" -o "$tmp/bomb"
check "a 64 MiB entry of zeros (~1000:1): exit 4" test "$rc" = 4
check "...refused by the ratio cap" has "$tmp/err" "compression ratio cap of 100:1"
check "...not written" test ! -e "$tmp/bomb/bomb.json"
check "...the real log is" test -s "$tmp/bomb/$app.zstd"
stop_server

start_server spark --app "$app" --file "$app.zstd=$skew" --bomb-many 200
run fetch spark-history "$url" --app "$app" -o "$tmp/many"
check "200 entries of 1 MiB zeros (each under the floor): exit 4" test "$rc" = 4
check "...the archive's cap stops them" has "$tmp/err" "further archive entries not unpacked"
got=$(du -sk "$tmp/many" | cut -f1)
check "...at most 100:1 of the ~300 KiB archive unpacked" test "$got" -lt 40000
check "...the real log first" test -s "$tmp/many/$app.zstd"
stop_server

big="$real/spark/platforms/databricks_example_1/eventlog-2022-01-14--18-00.gz"
if [ -n "$real" ] && [ -r "$big" ]; then
    start_server spark --app "$app" --file "eventlog=gunzip:$big"
    run fetch spark-history "$url" --app "$app" -o "$tmp/real"
    check "a real 11 MB Spark log, deflated ~15:1, passes the ratio cap" test "$rc" = 0
    check "...unpacked whole" test "$(wc -c <"$tmp/real/eventlog")" = "$(gzip -dc "$big" | wc -c)"
    stop_server
else
    echo "NOTICE: $big not found: the real-log ratio check is skipped"
fi

# --- usage ----------------------------------------------------------------------------
run fetch flink "http://127.0.0.1:1" --max-time 0
check "--max-time 0: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --max-requests many
check "bad --max-requests: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --min-rate 0
check "--min-rate 0: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --max-metric-names 0
check "--max-metric-names 0: exit 2" test "$rc" = 2
run fetch flink --help
check "--help documents --max-time" has "$tmp/out" "--max-time SECONDS"

finish
