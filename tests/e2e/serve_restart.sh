#!/usr/bin/env bash
# optipipe serve killed with kill -9 during an analysis (serve/serve_jobs.c,
# serve/serve_worker.c): the demo upload analyzed first gives the findings of
# `optipipe analyze --history` on the same files; a decision is made; a
# second analysis is held (a URL input to a server of this test that
# answers only when told); kill -9 of the server takes its worker along;
# restarted on the same DATA the finished analysis, its report and the
# decision are intact, and the interrupted analysis runs again and
# finishes once the URL server answers.
# Usage: serve_restart.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1

is_state() { test "$(serve_status "$1")" = "$2"; }
gone() { # the process is no more (or a zombie nobody reaped yet)
    [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null
}
lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# ---- the URL server that holds its answer ---------------------------------------------
check "URL server up" hold_start "$tmp"
hurl=$HOLD_URL/jobs/overview

opts=(--fetch-allow 127.0.0.1 --workers 1 --analysis-memory 2g --analysis-timeout 300)
check "server starts" serve_start "$tmp/data" "${opts[@]}"
[ -n "$SERVE_PID" ] || { cat "$SERVE_ERR"; finish; exit 1; }

# ---- the demo upload, analyzed as `analyze --history` would ---------------------------------
files=()
for f in "$demo"/*.json "$demo"/*.zstd "$demo"/dbt/*.json; do files+=(-F "file=@$f"); done
code=$(curl -s -o up1.json -w '%{http_code}' "${files[@]}" "$SERVE_URL/api/v1/analyses")
check "demo upload: 202" test "$code" = 202
id1=$(json_field up1.json id)
check "demo analysis done" serve_poll 600 is_state "$id1" done
a1=$tmp/data/analyses/$id1
"$bin" analyze --history "$tmp/cli.db" --format json --no-config --no-baseline \
    "$a1/inputs" >cli.json 2>cli.err
check "analyze on the same files runs" test -s cli.json
check "same findings as analyze --history" python3 - "$a1/report.json" cli.json <<'EOF'
import json, sys
def key(path):
    r = json.load(open(path))
    return sorted((f["rule"], f["fingerprint"], f["severity"], f["title"]) for f in r["findings"])
a, b = key(sys.argv[1]), key(sys.argv[2])
assert a and a == b, (a, b)
EOF
cp "$a1/report.json" report1.json
cp "$a1/report.html" report1.html
cp "$a1/meta.json" meta1.json
check "worker.log kept" test -e "$a1/worker.log"

# ---- a decision before the kill ------------------------------------------------------------------
serve_get "/api/v1/analyses/$id1" a1.json >/dev/null
fp=$(python3 -c '
import json
r = json.load(open("a1.json"))["report"]
print([f["fingerprint"] for f in r["findings"] if f["rule"] == "flink.bottleneck"][0])')
code=$(curl -s -o d.json -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "{\"fingerprint\": \"$fp\", \"status\": \"approved\", \"comment\": \"before kill\"}" \
    "$SERVE_URL/api/v1/decisions")
check "decision: 200" test "$code" = 200

# ---- an analysis held on its URL input, then kill -9 -----------------------------------------
code=$(curl -s -o up2.json -w '%{http_code}' -F "file=@$demo/flink-window-bottleneck.json" \
    -F "url=$hurl" "$SERVE_URL/api/v1/analyses")
check "held upload: 202" test "$code" = 202
id2=$(json_field up2.json id)
check "held analysis fetching" serve_poll 600 lines asked 1
check "held analysis running" is_state "$id2" running
worker=$(cat /proc/"$SERVE_PID"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 .)
check "the worker is a child of the server" test -n "$worker"
check "the worker runs serve --worker" grep -q -- "--worker" "/proc/$worker/cmdline"
limit() { awk -v k="$1" 'index($0, k) == 1 { print $(NF-2), $(NF-1) }' "/proc/$worker/limits"; }
check "worker: no core files" test "$(limit 'Max core file size')" = "0 0"
check "worker: CPU time 300 s + 5 (soft), + 10 (hard)" test "$(limit 'Max cpu time')" = "305 310"
if [ "${OP_SANITIZE:-0}" != 1 ]; then # ASan needs the address space
    check "worker: address space = --analysis-memory" \
        test "$(limit 'Max address space')" = "2147483648 2147483648"
fi
old=$SERVE_PID
kill -9 "$old"
wait "$old" 2>/dev/null
SERVE_PID=
check "the worker died with the server" serve_poll 300 gone "$worker"
check "on disk: interrupted while running" \
    test "$(json_field "$tmp/data/analyses/$id2/meta.json" state)" = running

# ---- restart on the same DATA ----------------------------------------------------------------
check "server restarts on the same DATA" serve_start "$tmp/data" "${opts[@]}"
[ -n "$SERVE_PID" ] || { cat "$SERVE_ERR"; finish; exit 1; }
check "finished analysis still done" is_state "$id1" done
check "its meta.json untouched" cmp -s meta1.json "$a1/meta.json"
check "its report.json untouched" cmp -s report1.json "$a1/report.json"
check "its report.html untouched" cmp -s report1.html "$a1/report.html"
serve_get "/api/v1/analyses/$id1" a1b.json >/dev/null
check "the decision survived" python3 - "$fp" <<'EOF'
import json, sys
r = json.load(open("a1b.json"))["report"]
d = [f["decision"] for f in r["findings"] if f["fingerprint"] == sys.argv[1]][0]
assert d and d["status"] == "approved" and d["comment"] == "before kill", d
EOF
check "the interrupted analysis runs again" serve_poll 600 lines asked 2
check "... and is running" is_state "$id2" running
touch release
check "it finishes once the URL answers" serve_poll 600 serve_ended "$id2"
serve_get "/api/v1/analyses/$id2" a2.json >/dev/null
check "done: the uploaded file analyzed" test "$(json_field a2.json status)" = done
check "its report has the file's findings" python3 -c '
import json
r = json.load(open("a2.json"))["report"]
assert any(f["rule"] == "flink.bottleneck" for f in r["findings"]), r["findings"]'
check "the URL's failure said in worker.log" has "$tmp/data/analyses/$id2/worker.log" "$hurl: error:"
check "server stops" serve_stop

# ---- out of memory: --analysis-memory far below what an analysis needs -------------------
if [ "${OP_SANITIZE:-0}" != 1 ]; then
    check "server with 8 MiB per analysis" serve_start "$tmp/data3" --analysis-memory 8m
    code=$(curl -s -o up3.json -w '%{http_code}' -F "file=@$demo/flink-window-bottleneck.json" \
        "$SERVE_URL/api/v1/analyses")
    check "small upload: 202" test "$code" = 202
    id3=$(json_field up3.json id)
    check "it ends" serve_poll 600 serve_ended "$id3"
    serve_get "/api/v1/analyses/$id3" a3.json >/dev/null
    check "failed: out of memory, the limit named" python3 -c '
import json
a = json.load(open("a3.json"))
assert a["status"] == "failed", a
assert a["error"].startswith("out of memory (--analysis-memory 8388608 bytes): "), a["error"]'
    check "server stops (3)" serve_stop
fi
finish
