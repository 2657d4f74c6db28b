#!/usr/bin/env bash
# The run store on PostgreSQL from the command line and the server
# (docs/history.md "PostgreSQL"), against a throw-away server
# (tests/lib/pg.sh; skipped with a notice when PostgreSQL is not
# installed): analyze --history, history jobs|runs|show|prune and diff of
# stored runs give the same JSON on an SQLite file and on PostgreSQL; a
# password in the URI is refused (exit 6, the analysis still printed), a
# server not there is named (exit 3); history copy SQLite -> PostgreSQL ->
# SQLite keeps every answer and the decisions' audit trail in order, and
# refuses a DST that holds runs; serve
# --store URI records its analyses there and its decisions reach it, its
# webhooks are deduplicated and logged there, and its /healthz is 503
# while PostgreSQL is down, 200 once it is back.
# Usage: history_pg.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
. "$src/tests/lib/pg.sh"
pg_e2e_start "$bin"
trap '_serve_cleanup; pg_stop' EXIT
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
cd "$tmp" || exit 1
op() { "$bin" "$@" >out 2>err; rc=$?; }
nights=$src/fixtures/spark-nightly/steady

pg=$(pg_createdb hist)
sq=$tmp/h.db
# same_on_both NAME ARGS...: `optipipe ARGS` with STORE replaced by each
# store gives the same output (the stores' names and the timings aside)
# and exit code
same_on_both() {
    local name=$1 k s a
    shift
    for k in sq pg; do
        s=$sq
        [ $k = pg ] && s=$pg
        a=()
        for w in "$@"; do a+=("${w//STORE/$s}"); done
        "$bin" "${a[@]}" >"o.$k" 2>"e.$k"
        echo $? >"rc.$k"
        # the stores' names, and the timings of the analysis
        sed -i -E -e "s|$s|STORE|g" -e '/"(elapsed|read|rules)_ms": /d' "o.$k" "e.$k"
    done
    diff o.sq o.pg >o.diff; E2E_OUT=o.diff E2E_ERR=e.pg
    check "$name: the same exit code on both" cmp -s rc.sq rc.pg
    check "$name: the same output on both" cmp -s o.sq o.pg
    E2E_OUT=out E2E_ERR=err
}

same_on_both "analyze --history records" analyze --no-config --no-baseline \
    --history STORE --format json "$src/fixtures/demo"
check "...the demo's 9 runs" has e.pg "STORE: recorded 9 runs"
for n in 01 02 03 04; do
    same_on_both "night $n" analyze -q --no-config --no-baseline --history STORE \
        --format json "$nights/night-$n.log.gz"
done
same_on_both "history jobs" history --history STORE jobs --format json
same_on_both "history runs (dbt)" history --history STORE runs shop/build --format json
same_on_both "history runs --metric" history --history STORE runs nightly-orders \
    --metric jobs_wall_ms --format json
same_on_both "history runs (text, sparkline)" history --history STORE runs nightly-orders
same_on_both "history show JOB@previous" history --history STORE show \
    nightly-orders@previous --format json
same_on_both "a near miss" history --history STORE runs shop/buld
same_on_both "diff of stored runs" diff --history STORE nightly-orders@previous \
    nightly-orders@latest --format json
same_on_both "rules see ctx.history" analyze --no-config --no-baseline \
    --history STORE --format json "$nights/night-04.log.gz"

# refusals, each named
op analyze --no-config --no-baseline --history \
    "postgresql://optipipe:hunter22@127.0.0.1:${pg##*:}" "$src/fixtures/demo"
check "a password in the URI: not recorded (exit 6)" test "$rc" = 6
check "...said why" has err "would show in ps"
check "...the refusal does not echo the password" bash -c '! grep "would show in ps" err | grep -q hunter22'
check "...the analysis still printed" test -s out
op history --history postgresql://optipipe@127.0.0.1:1/nothing jobs
check "a server not there: exit 3" test "$rc" = 3
check "...named" has err "postgresql://optipipe@127.0.0.1:1/nothing: cannot connect"

# history copy: SQLite -> PostgreSQL -> SQLite
cp=$(pg_createdb copied)
op history copy "$sq" "$cp"
check "history copy SQLite -> PostgreSQL" test "$rc" = 0
check "...counts said" has out "copied 13 runs, [0-9]* nodes, [0-9]* findings, 0 decisions, 0 decision changes, 0 notifications remembered and 0 deliveries logged"
op history copy "$sq" "$cp"
check "a DST with runs is refused (exit 2)" test "$rc" = 2
check "...saying so" has err "holds 13 runs, 0 decisions, 0 decision changes and 0 notification rows already"
op history copy "$cp" back.db
check "history copy PostgreSQL -> SQLite" test "$rc" = 0
for c in jobs "runs nightly-orders" "show shop/build@latest"; do
    # shellcheck disable=SC2086
    "$bin" history --history "$sq" $c --format json >a.json 2>/dev/null
    # shellcheck disable=SC2086
    "$bin" history --history back.db $c --format json >b.json 2>/dev/null
    check "history $c: the same after the round trip" cmp -s a.json b.json
done

# history copy keeps the decisions' audit trail, in order: a decisions
# file's decision, a newer file's, then the older file again (a conflict)
demo=$src/fixtures/demo/flink-window-bottleneck.json
"$bin" analyze --no-config --format json "$demo" >f.json 2>/dev/null
mkdir -p old new
for d in old:dismissed:2020-01-01T00:00:00Z new:approved:2026-06-01T00:00:00Z; do
    python3 - f.json "${d%%:*}/.optipipe-baseline.json" "$(echo "$d" | cut -d: -f2)" \
        "${d#*:*:}" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["findings"][0]
json.dump({"optipipe_baseline": 1, "decisions": [{
    "fingerprint": f["fingerprint"], "rule": f["rule"], "run": "r",
    "status": sys.argv[3], "reason": "why " + sys.argv[3],
    "decided_at": sys.argv[4]}]}, open(sys.argv[2], "w"))
PY
done
for d in old new old; do
    (cd $d && "$bin" analyze -q --no-config --history "$tmp/audit.db" "$demo" >/dev/null 2>&1)
done
cpa=$(pg_createdb audit)
op history copy audit.db "$cpa"
check "history copy of a store with an audit trail" test "$rc" = 0
check "...counts its 3 decision changes" has out "1 decisions, 3 decision changes"
op history copy "$cpa" audit-back.db
check "...and back" test "$rc" = 0
check "the audit trail is the same after the round trip, in order" python3 - audit.db audit-back.db <<'PY'
import sqlite3, sys
q = ("select fingerprint, changed_at, changed_by, kind, old_status, old_comment,"
     " new_status, new_comment, detail from decision_log order by seq")
a, b = (sqlite3.connect(p).execute(q).fetchall() for p in sys.argv[1:3])
assert len(a) == 3 and [r[3] for r in a] == ["file", "file", "conflict"], a
assert a == b, (a, b)
PY

# history copy carries the notification tables (notify_said, notify_log),
# both ways: rows as analyze's webhooks write them, added to a copy of
# the audit store
cp audit.db notes.db
python3 - notes.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executemany("insert into notify_log(at, endpoint, event, fingerprint, status, attempts, error, digest)"
              " values(?, ?, ?, ?, ?, ?, ?, ?)",
              [("2026-12-01T00:00:00Z", "team", "finding", "00000000000000aa", "sent", 1, None, "d1"),
               ("2026-12-01T00:00:01Z", "team", "failed", "00000000000000bb", "failed", 4, "HTTP 500", None),
               ("2026-12-01T00:00:02Z", "chat", "finding", "00000000000000aa", "sent", 2, None, "d2")])
c.executemany("insert into notify_said(endpoint, fingerprint, digest, said_at) values(?, ?, ?, ?)",
              [("team", "00000000000000aa", "d1", "2026-12-01T00:00:00Z"),
               ("chat", "00000000000000aa", "d2", "2026-12-01T00:00:02Z")])
c.commit()
PY
cpn=$(pg_createdb notes)
op history copy notes.db "$cpn"
check "history copy of a store with notifications" test "$rc" = 0
check "...counts them" has out "2 notifications remembered and 3 deliveries logged"
op history copy "$cpn" notes-back.db
check "...and back" test "$rc" = 0
check "the notification tables are the same after the round trip" python3 - notes.db notes-back.db <<'PY'
import sqlite3, sys
qs = ("select at, endpoint, event, fingerprint, status, attempts, error, digest from notify_log order by seq",
      "select endpoint, fingerprint, digest, said_at from notify_said order by endpoint, fingerprint")
for q in qs:
    a, b = (sqlite3.connect(p).execute(q).fetchall() for p in sys.argv[1:3])
    assert a and a == b, (a, b)
PY
"$bin" history notifications --history "$cpn" --format json >n.json 2>/dev/null
check "history notifications reads them from PostgreSQL" \
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["endpoint"] for x in r] == ["chat", "team", "team"], r' n.json

# serve --store URI, with a webhook on a local receiver (deduplicated
# through the PostgreSQL store)
export HOOK_SECRET=pg-e2e-$$
mkdir recv
python3 "$src/tests/e2e/lib/hook_receiver.py" hook.port recv &
hook_pid=$!
trap '_serve_cleanup; kill "$hook_pid" 2>/dev/null; pg_stop' EXIT
check "a webhook receiver listens" wait_until test -s hook.port
cat >notify.lua <<LUA
return { notify = { { name = "team", url = "http://127.0.0.1:$(cat hook.port)/h",
  kind = "json", secret_env = "HOOK_SECRET" } } }
LUA
posts() { ls recv | grep -c '^[0-9]*\.json$'; }
got() { test "$(posts)" -ge "$1"; }
sv=$(pg_createdb served)
check "serve --store URI starts" serve_start "$tmp/data" --store "$sv" --config notify.lua
curl -s -o up.json -F "file=@$src/fixtures/demo/spark-application_1700000000000_0042.zstd" \
    "$SERVE_URL/api/v1/analyses" >/dev/null
id=$(json_field up.json id)
check "an upload's analysis ends" serve_poll 300 serve_ended "$id"
check "...done" test "$(serve_status "$id")" = done
check "...and its findings are notified" serve_poll 600 got 1
curl -s -o up2.json -F "file=@$src/fixtures/demo/spark-application_1700000000000_0042.zstd" \
    "$SERVE_URL/api/v1/analyses" >/dev/null
check "the same upload again ends" serve_poll 300 serve_ended "$(json_field up2.json id)"
echo junk >junk.txt
curl -s -o up3.json -F "file=@junk.txt" "$SERVE_URL/api/v1/analyses" >/dev/null
check "a junk upload's failure is notified" serve_poll 600 got 2
check "...the second POST is that failure: the repeat told nothing (PostgreSQL dedup)" \
    json_is recv/2.json "[e['event'] for e in d['body']['events']]" "['failed']"
op history notifications --history "$sv" --format json
check "the deliveries are logged in the PostgreSQL store" \
    json_is out "sorted({r['event'] for r in d if r['status'] == 'sent'})" "['failed', 'finding']"
check "...with no history.db in DATA" test ! -e data/history.db
op history --history "$sv" jobs --format json
check "its run is in the PostgreSQL store" json_is out "len(d)" 1
serve_get "/api/v1/analyses/$id" a.json >/dev/null
fp=$(json_field a.json report.findings.0.fingerprint)
code=$(curl -s -o d.json -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "{\"fingerprint\": \"$fp\", \"status\": \"dismissed\", \"comment\": \"noise\"}" \
    "$SERVE_URL/api/v1/decisions")
check "a decision through the API: 200" test "$code" = 200
op history --history "$sv" show "$(json_field a.json report.runs.0.id)" --format json
check "...reaches the PostgreSQL store" has out '"decision": "dismissed"'
# /healthz says whether the store opens: 503 while PostgreSQL is down, 200
# again once it is back (each probe at most every 2 s: waited for, bounded)
hz() { curl -s -o hz.json -w '%{http_code}' "$SERVE_URL/healthz"; }
check "/healthz: 200, the store reachable" test "$(hz)" = 200
check "...backend postgresql" json_is hz.json "d['store']" "{'backend': 'postgresql', 'reachable': True}"
pg_pause
hz_is() { [ "$(hz)" = "$1" ]; }
check "PostgreSQL stopped: /healthz 503" serve_poll 600 hz_is 503
check "...says the store is unreachable" json_is hz.json "d['status']" "store unreachable"
check "...without naming the store to anyone asking" bash -c "! grep -q 127.0.0.1 hz.json"
check "...the server's log names it" has "$SERVE_ERR" "the run store is unreachable: .*cannot connect"
check "PostgreSQL back" pg_resume
check "...then /healthz 200 again" serve_poll 600 hz_is 200
check "...and the log says so" has "$SERVE_ERR" "the run store is reachable again"
serve_stop
finish
