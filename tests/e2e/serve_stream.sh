#!/usr/bin/env bash
# optipipe serve renders pages off the HTTP threads and sends them as they
# are written (issue #24, serve/serve_stream.c): with one HTTP thread
# (--threads 1) and its one render slot held busy through the test hook
# (OPTIPIPE_SERVE_TEST_HOLD, no timing), /healthz and /metrics still
# answer on every kept-alive connection the server already holds (they
# share the one HTTP thread) and on a new one; the held page is answered
# once released, and its connection is kept alive after it. A page larger
# than --server-memory is sent chunked and whole, its connection kept
# alive, and the budget is given back.
# Usage: serve_stream.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

data=$tmp/data
db=$data/history.db
mkdir -p "$data" "$tmp/hold"
chmod 700 "$data"
"$bin" analyze --no-config --no-baseline --history "$db" \
    "$src/fixtures/demo/flink-window-bottleneck.json" >"$tmp/an.out" 2>"$tmp/an.err"
check "a run recorded" test -s "$db"
# the run grows to 15000 nodes: its API answer is ~1 MB
python3 - "$db" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
pk = c.execute("select pk from runs").fetchone()[0]
c.executemany("insert into nodes(run_pk, seq, id) values (?, ?, ?)",
              [(pk, 1000000 + i, "node-%06d" % i) for i in range(15000)])
c.commit()
PYEOF
run=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select run_id from runs").fetchone()[0])' "$db")

export OPTIPIPE_SERVE_TEST_HOLD=$tmp/hold
check "server starts (one HTTP thread, 256 KiB budget)" serve_start "$data" \
    --threads 1 --server-memory 256k
unset OPTIPIPE_SERVE_TEST_HOLD
E2E_ERR=$SERVE_ERR
E2E_OUT=$tmp/py.out

# The client: 4 connections kept alive, each answered once; then a page
# that the hook holds on a fifth (also used once before); while it is
# held, /healthz and /metrics on the 4 and on a new connection; then the
# release, the page, and /healthz again on the page's own connection.
# Socket timeouts (120 s) are a safety net: with the page rendered on the
# HTTP thread (before), every answer below waited for the release.
python3 - "$SERVE_PORT" "$tmp/hold" "$run" >"$tmp/py.out" 2>&1 <<'PYEOF'
import http.client, os, sys, time, urllib.parse
port, hold, run = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def conn():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)

def get(c, path):
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    return r.status, r.getheader("Transfer-Encoding"), body

kept = [conn() for _ in range(4)]
for i, c in enumerate(kept):
    print("warm", i, get(c, "/healthz")[0])
page = conn()
print("page-warm", get(page, "/healthz")[0])
page.request("GET", "/jobs")
# wait for the hook's file (a safety-net bound, not a synchronisation)
end = time.time() + 120
while not os.path.exists(os.path.join(hold, "held.1")) and time.time() < end:
    time.sleep(0.02)
print("held", os.path.exists(os.path.join(hold, "held.1")))
for i, c in enumerate(kept):
    print("kept", i, "/healthz", get(c, "/healthz")[0])
    print("kept", i, "/metrics", get(c, "/metrics")[0])
fresh = conn()
print("fresh /healthz", get(fresh, "/healthz")[0])
print("busy page", get(fresh, "/analyses")[0])
open(os.path.join(hold, "release"), "w").close()
r = page.getresponse()
r.read()
print("page", r.status)
print("page-after /healthz", get(page, "/healthz")[0])
# a page larger than the budget: chunked, whole, the connection kept
s, te, body = get(page, "/api/v1/runs/" + urllib.parse.quote(run, safe=""))
import json
nodes = json.loads(body)
nodes = nodes.get("run", nodes)["nodes"]
print("big", s, te, len(body) > 262144, len(nodes) > 15000)
print("big-after /healthz", get(page, "/healthz")[0])
PYEOF
has_line() { grep -qx -- "$1" "$tmp/py.out"; }
check "the kept-alive connections answer first" has_line "warm 3 200"
check "the page is held by the hook" has_line "held True"
for i in 0 1 2 3; do
    check "held: /healthz on kept-alive connection $i: 200" has_line "kept $i /healthz 200"
    check "held: /metrics on kept-alive connection $i: 200" has_line "kept $i /metrics 200"
done
check "held: /healthz on a new connection: 200" has_line "fresh /healthz 200"
check "held: a page beyond the one render slot: 503" has_line "busy page 503"
check "released: the held page is 200" has_line "page 200"
check "...and its connection answers again" has_line "page-after /healthz 200"
check "a 1 MB answer with a 256 KiB budget: 200, chunked, whole" has_line "big 200 chunked True True"
check "...and the connection is kept after it" has_line "big-after /healthz 200"
E2E_OUT=$tmp/out
curl -s "$SERVE_URL/metrics" >"$tmp/metrics"
held_bytes=$(sed -n 's/^optipipe_server_memory_bytes \([0-9]*\)$/\1/p' "$tmp/metrics")
check "the budget was given back ($held_bytes bytes held)" \
    test -n "$held_bytes" -a "${held_bytes:-999999}" -le 32768
check "SIGTERM stops it with 0" serve_stop
finish
