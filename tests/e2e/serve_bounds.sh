#!/usr/bin/env bash
# optipipe serve's per-request bounds (issue #24, serve/serve_budget.c,
# serve_ui_jobs.c): /healthz and /metrics answer while every page renderer
# is held busy (the OPTIPIPE_SERVE_TEST_HOLD hook, no timing) and a page
# beyond the render slots is a 503 with Retry-After; GET /jobs pages
# (?limit, ?before, a next link; bad ones 400); a job page charts the
# metrics of its newest runs only and says which were too large to parse;
# /diff refuses runs over 20000 nodes with 413 naming the CLI; an answer
# larger than --server-memory is streamed whole (chunked), what a page
# must reserve beyond it gets 503 and the server lives on, its budget
# given back.
# Usage: serve_bounds.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

data=$tmp/data
db=$data/history.db
mkdir -p "$data" "$tmp/hold"
chmod 700 "$data"
for f in flink-window-bottleneck.json spark-application_1700000000000_0042.zstd dbt; do
    "$bin" analyze --no-config --no-baseline --history "$db" "$src/fixtures/demo/$f" \
        >"$tmp/an.out" 2>>"$tmp/an.err"
done
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2]).fetchall(); c.commit(); print("\n".join("|".join(str(x) for x in row) for row in r))' "$db" "$1"; }
check "three jobs recorded" test "$(sql 'select count(distinct job) from runs')" = 3
flink_run=$(sql "select run_id from runs where source = 'flink'")
flink_job=$(sql "select job from runs where source = 'flink'")
dbt_run=$(sql "select run_id from runs where source = 'dbt' limit 1")
dbt_job=$(sql "select job from runs where source = 'dbt' limit 1")
# the flink run grows to 20001 more nodes; a dbt run gets fat metrics
sql "insert into nodes(run_pk, seq, id) select r.pk, 1000000 + s.value, 'n' || s.value
     from runs r, generate_series(1, 20001) s where r.source = 'flink'" >/dev/null 2>&1 ||
    python3 - "$db" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
pk = c.execute("select pk from runs where source = 'flink'").fetchone()[0]
c.executemany("insert into nodes(run_pk, seq, id) values (?, ?, ?)",
              [(pk, 1000000 + i, "n%d" % i) for i in range(20001)])
c.commit()
PYEOF
check "the flink run has over 20000 nodes" test "$(sql "select count(*) from nodes n join runs r on n.run_pk = r.pk where r.source = 'flink'")" -gt 20000
# ...and a dbt run 150 more (a diff of it with itself: 300 nodes, over
# what a 256 KiB budget lets a diff page reserve)
python3 - "$db" "$dbt_run" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
pk = c.execute("select pk from runs where run_id = ? and source = 'dbt'", (sys.argv[2],)).fetchone()[0]
c.executemany("insert into nodes(run_pk, seq, id) values (?, ?, ?)",
              [(pk, 1000000 + i, "extra%d" % i) for i in range(150)])
c.commit()
PYEOF
sql "update runs set metrics = '{\"pad\": \"' || printf('%.70000c', 'x') || '\", \"x\": 1}' where run_id = '$dbt_run' and source = 'dbt'" >/dev/null

# two threads: one render slot, one thread always free for /healthz
export OPTIPIPE_SERVE_TEST_HOLD=$tmp/hold
check "server starts" serve_start "$data" --threads 2 --server-memory 256k
unset OPTIPIPE_SERVE_TEST_HOLD
E2E_ERR=$SERVE_ERR
code() { curl -s --max-time 120 -o "$tmp/out" -D "$tmp/h" -w '%{http_code}' "$@"; }
held() { [ -e "$tmp/hold/held.1" ]; }

# ---- /healthz never waits behind page rendering ---------------------------------
curl -s --max-time 200 -o "$tmp/jobs0.html" -w '%{http_code}' "$SERVE_URL/jobs" >"$tmp/jobs0.code" &
pager=$!
check "a page renderer is held (the test hook)" serve_poll 600 held
check "while it is held /healthz answers 200" test "$(code "$SERVE_URL/healthz")" = 200
check "...and /metrics" test "$(code "$SERVE_URL/metrics")" = 200
check "...and the static files" test "$(code "$SERVE_URL/static/app.css")" = 200
check "a page beyond the render slots: 503" test "$(code "$SERVE_URL/analyses")" = 503
check "...with Retry-After" grep -qi '^Retry-After: 1' "$tmp/h"
touch "$tmp/hold/release"
wait "$pager"
check "the held page is answered once released" test "$(cat "$tmp/jobs0.code")" = 200

# ---- /jobs pages ----------------------------------------------------------------
check "/jobs?limit=1: 200" test "$(code "$SERVE_URL/jobs?limit=1")" = 200
check "...one job row" test "$(grep -c '<tr><td><a href="/jobs/' "$tmp/out")" = 1
next=$(sed -n 's/.*rel="next" href="\([^"]*\)".*/\1/p' "$tmp/out" | sed 's/&amp;/\&/g')
check "...a next link" test -n "$next"
seen=1
while [ -n "$next" ] && [ "$seen" -lt 5 ]; do
    code "$SERVE_URL$next" >/dev/null
    seen=$((seen + $(grep -c '<tr><td><a href="/jobs/' "$tmp/out")))
    next=$(sed -n 's/.*rel="next" href="\([^"]*\)".*/\1/p' "$tmp/out" | sed 's/&amp;/\&/g')
done
check "following the next links shows every job once" test "$seen" = 3
check "/jobs shows all three on one default page" sh -c "curl -s '$SERVE_URL/jobs' | grep -c '<tr><td><a href=\"/jobs/' | grep -qx 3"
check "/jobs?limit=0: 400" test "$(code "$SERVE_URL/jobs?limit=0")" = 400
check "/jobs?limit=9999: 400" test "$(code "$SERVE_URL/jobs?limit=9999")" = 400
check "/jobs?before=%00: 400" test "$(code "$SERVE_URL/jobs?before=%00")" = 400

# ---- a job page parses bounded metrics ------------------------------------------
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
check "the dbt job page: 200" test "$(code "$SERVE_URL/jobs/$(enc "$dbt_job")")" = 200
check "...says the fat metrics were not charted" has "$tmp/out" "larger than 65536 bytes and not charted"

# ---- /diff of runs too large -----------------------------------------------------
c=$(code "$SERVE_URL/diff?a=$(enc "$flink_run")&b=$(enc "$flink_run")")
check "diff of a 20001-node run: 413" test "$c" = 413
check "...naming the cap and the CLI" has "$tmp/out" "more than the 20000 a diff page compares"
check "...the server lives" test "$(code "$SERVE_URL/healthz")" = 200

# ---- over --server-memory --------------------------------------------------------
# an answer larger than the budget is streamed, never held whole
c=$(code "$SERVE_URL/api/v1/runs/$(enc "$flink_run")")
check "a 20001-node run over the API with a 256 KiB budget: 200, streamed ($c)" test "$c" = 200
check "...chunk by chunk" grep -qi '^Transfer-Encoding: chunked' "$tmp/h"
check "...larger than the budget ($(wc -c <"$tmp/out") bytes)" test "$(wc -c <"$tmp/out")" -gt 262144
check "...whole: valid JSON with every node" sh -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d.get(\"run\", d); n=r[\"nodes\"]; sys.exit(0 if len(n) > 20000 else 1)' '$tmp/out'"
# what a page must reserve beyond the budget is refused
c=$(code "$SERVE_URL/diff?a=$(enc "$dbt_run")&b=$(enc "$dbt_run")")
check "a diff reserving more than --server-memory: 503 ($c)" test "$c" = 503
check "...saying the budget" has "$tmp/out" "memory budget (--server-memory)"
check "...with Retry-After" grep -qi '^Retry-After:' "$tmp/h"
check "the server lives on: /healthz 200" test "$(code "$SERVE_URL/healthz")" = 200
check "...a small page still 200" test "$(code "$SERVE_URL/jobs/$(enc "$flink_job")")" = 200
curl -s "$SERVE_URL/metrics" >"$tmp/metrics"
held_bytes=$(sed -n 's/^optipipe_server_memory_bytes \([0-9]*\)$/\1/p' "$tmp/metrics")
check "the budget was given back (the metrics page holds only itself: $held_bytes)" \
    test -n "$held_bytes" -a "${held_bytes:-999999}" -le 32768
check "SIGTERM stops it with 0" serve_stop
finish
