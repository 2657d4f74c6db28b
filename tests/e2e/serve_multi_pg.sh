#!/usr/bin/env bash
# Several `optipipe serve` instances on one PostgreSQL store and one DATA
# (docs/serve.md "Several instances"), against a throw-away server
# (tests/lib/pg.sh; skipped with a notice when PostgreSQL is not
# installed): two servers start on one DATA (an SQLite server beside them
# is refused); uploads through either are analyzed once and read through
# both; a browser session opened on one works on the other, and signing
# out on the other ends it on both; the queue limit (429) counts over both;
# an instance killed with kill -9 while its worker had recorded the runs
# (held at the serve.worker.recorded test hook) is taken over by the other
# once its heartbeat is stale (the test ages it in the table rather than
# waiting a short --heartbeat-stale out, which under load could take a
# live instance for dead), which finishes the
# analysis once, its runs recorded once; SIGTERM hands a running analysis
# back (exit 0) and the next instance finishes it; --queue counts over
# both instances (429 when the shared queue is full, whichever instance
# is asked); PostgreSQL stopped, an upload is refused without naming the
# store, and analyzed once it is back. Nothing waits on time:
# the tests wait on hooks and states, bounded.
# Usage: serve_multi_pg.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
. "$src/tests/lib/pg.sh"
pg_e2e_start "$bin"
PIDS=()
NGX=
multi_cleanup() {
    local p
    # TERM: nginx's master stops its workers (KILL would leave them)
    [ -n "$NGX" ] && kill -TERM "$NGX" 2>/dev/null && wait "$NGX" 2>/dev/null
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    _serve_cleanup
    pg_stop
}
trap multi_cleanup EXIT
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
cd "$tmp" || exit 1
demo=$src/fixtures/demo
uri=$(pg_createdb multi)
token=multi-instance-test-token-0123456789
printf '%s\n' "$token" >tokens
chmod 600 tokens
mkdir -m 700 hA hB hC
auth=(-H "Authorization: Bearer $token")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
nport=$(free_port) pa=$(free_port) pb=$(free_port)
# behind nginx on $nport (when installed): the instances take its Host
# --heartbeat-stale 60 (the default): a live instance is never taken for
# dead under load; the takeover below ages the killed one's heartbeat in
# the table instead of waiting for it to go stale
opts=(--store "$uri" --token-file "$tmp/tokens" --workers 1 --heartbeat-stale 60
    --public-origin "http://127.0.0.1:$nport")

# start NAME HOOKS [PORT]: a server on DATA with its own hooks folder (on
# PORT, else any free one); sets NAME_URL, NAME_PID, NAME_ERR
start() {
    local l=()
    [ -n "${3:-}" ] && l=(--listen "127.0.0.1:$3")
    OPTIPIPE_TEST_HOOKS=$tmp/$2 serve_start "$tmp/data" "${opts[@]}" "${l[@]}" || return 1
    printf -v "$1_URL" %s "$SERVE_URL"
    printf -v "$1_PID" %s "$SERVE_PID"
    printf -v "$1_ERR" %s "$SERVE_ERR"
    PIDS+=("$SERVE_PID")
    SERVE_PID= # stopped here, not by serve.sh's trap
}
# status URL ID: the analysis' status as that instance answers
status() {
    curl -s "${auth[@]}" -o st.json "$1/api/v1/analyses/$2" && json_field st.json status
}
ended_on() { case $(status "$1" "$2") in done | failed | record-failed) return 0 ;; esac; return 1; }
status_is() { [ "$(status "$1" "$2")" = "$3" ]; }
upload() { # upload URL FILE: prints the id
    curl -s "${auth[@]}" -o up.json -F "file=@$2" "$1/api/v1/analyses" >/dev/null &&
        json_field up.json id
}
gone() { ! kill -0 "$1" 2>/dev/null; }
psql_q() { PGPASSFILE=$PGPASSFILE "$(pg_bin)/psql" -qAt "$uri" -c "$1"; }
night_runs() { psql_q "select count(*) from runs where run_id = 'application_1700000000000_0301'"; }

# DATA/tmp shared: a start removes only a leftover a day old (another
# instance may be receiving an upload in a younger one)
mkdir -m 700 -p data/tmp/old.up data/tmp/new.up
touch -d '2 days ago' data/tmp/old.up
check "instance A starts" start A hA "$pa"
check "...having removed the day-old leftover of DATA/tmp" test ! -e data/tmp/old.up
check "...and left the young one" test -d data/tmp/new.up
check "instance B starts on the same DATA" start B hB "$pb"
check "...an SQLite server on that DATA is refused (exit 2)" sh -c \
    "'$bin' serve --listen 127.0.0.1:0 --data '$tmp/data' 2>err.sq; test \$? = 2"
check "...saying why" has err.sq "another optipipe serve uses"

# uploads through both, read through both
ia=$(upload "$A_URL" "$demo/spark-application_1700000000000_0042.zstd")
ib=$(upload "$B_URL" "$demo/flink-window-bottleneck.json")
check "an upload through A" test -n "$ia"
check "an upload through B" test -n "$ib"
check "A's analysis ends, seen from B" serve_poll 600 ended_on "$B_URL" "$ia"
check "B's analysis ends, seen from A" serve_poll 600 ended_on "$A_URL" "$ib"
check "...both done" test "$(status "$A_URL" "$ia")/$(status "$B_URL" "$ib")" = done/done
curl -s "${auth[@]}" -o listA.json "$A_URL/api/v1/analyses"
curl -s "${auth[@]}" -o listB.json "$B_URL/api/v1/analyses"
check "A lists both analyses" json_is listA.json "sorted(a['id'] for a in d['analyses']) == sorted(['$ia', '$ib'])" True
check "...B the same" json_is listB.json "sorted(a['id'] for a in d['analyses']) == sorted(['$ia', '$ib'])" True
code=$(curl -s "${auth[@]}" -o rep.html -w '%{http_code}' "$B_URL/analyses/$ia/report.html")
check "B serves the report A's worker wrote (200)" test "$code" = 200

# a browser session opened on A works on B; signing out on B ends it on A
curl -s -c jar -o /dev/null "$A_URL/login"
csrf=$(awk '$6 == "op_csrf" {print $7}' jar)
code=$(curl -s -b jar -c jar -o /dev/null -w '%{http_code}' -d "csrf=$csrf" \
    --data-urlencode "token=$token" "$A_URL/login")
check "signed in on A (303)" test "$code" = 303
check "...a session cookie" has jar "op_session"
code=$(curl -s -b jar -o me.json -w '%{http_code}' "$B_URL/api/v1/me")
check "the session cookie works on B (200)" test "$code" = 200
check "...as a browser session" test "$(json_field me.json auth)" = session
sid=$(awk '$6 == "op_session" {print $7}' jar)
check "...the table keeps its hash, not the cookie" test "$(psql_q "select count(*) from sessions where id_hash = '$sid'")/$(psql_q 'select count(*) from sessions')" = 0/1
code=$(curl -s -b jar -o /dev/null -w '%{http_code}' -d "csrf=$csrf" "$B_URL/logout")
check "signed out on B" test "$code" = 303
code=$(curl -s -b jar -o /dev/null -w '%{http_code}' "$A_URL/api/v1/me")
check "...and the session is gone on A too (401)" test "$code" = 401

# a rolling restart behind docs/serve.md's nginx upstream (its block as
# written, the ports changed): A stopped (SIGTERM, exit 0) and started
# again, then B; every request through nginx meanwhile answered
nginx=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)
if [ -z "$nginx" ]; then
    echo "NOTICE: nginx is not installed: the rolling restart behind it was not tried"
else
    python3 - "$src/docs/serve.md" "$tmp" "$nport" "$pa" "$pb" >nginx.conf <<'PY'
import sys
doc, tmp, nport, pa, pb = sys.argv[1:]
text = open(doc).read()
start = text.index("# /etc/nginx/conf.d/optipipe-instances.conf")
block = text[start:text.index("```", start)]
for a, b in [("127.0.0.1:8081", "127.0.0.1:" + pa), ("127.0.0.1:8082", "127.0.0.1:" + pb)]:
    assert a in block, a
    block = block.replace(a, b)
# the server block's lines the page names in its comment, uncommented
inside = [l.strip().lstrip("#").strip() for l in block.splitlines()
          if l.strip().startswith("#") and "proxy_next_upstream" in l]
assert len(inside) == 2, inside
print("""worker_processes 1;
error_log %(t)s/nginx.err;
pid %(t)s/nginx.pid;
events {}
http {
access_log off;
client_body_temp_path %(t)s/nb; proxy_temp_path %(t)s/np;
fastcgi_temp_path %(t)s/nf; uwsgi_temp_path %(t)s/nu; scgi_temp_path %(t)s/ns;
%(b)s
server {
    listen 127.0.0.1:%(p)s;
    client_max_body_size 1g;
    proxy_request_buffering off;
    location / {
        proxy_pass http://optipipe;
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        %(i)s
    }
}
}""" % {"t": tmp, "b": block, "p": nport, "i": "\n        ".join(inside)})
PY
    "$nginx" -p "$tmp" -c "$tmp/nginx.conf" -g 'daemon off;' >nginx.start 2>&1 &
    NGX=$!
    N=http://127.0.0.1:$nport
    ok_through() { # ok_through N: N requests through nginx, each 200
        local i c
        for i in $(seq "$1"); do
            c=$(curl -s "${auth[@]}" -o /dev/null -w '%{http_code}' "$N/api/v1/analyses/$ia")
            [ "$c" = 200 ] || { echo "  request $i through nginx: $c"; return 1; }
        done
    }
    nup() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$N/healthz")" = 200 ]; }
    check "nginx starts with the page's upstream" serve_poll 300 nup
    check "through nginx: 20 requests, each 200" ok_through 20
    kill -TERM "$A_PID"
    check "A stops on SIGTERM" wait_until gone "$A_PID"
    wait "$A_PID"
    check "...exit 0" test $? = 0
    check "A down: 20 requests through nginx, each 200 (B answers)" ok_through 20
    iu=$(upload "$N" "$demo/flink-window-bottleneck.json")
    check "...an upload through nginx meanwhile is analyzed" serve_poll 600 status_is "$B_URL" "$iu" done
    check "A started again on its port" start A hA "$pa"
    kill -TERM "$B_PID"
    check "B stops on SIGTERM" wait_until gone "$B_PID"
    wait "$B_PID"
    check "...exit 0" test $? = 0
    check "B down: 20 requests through nginx, each 200 (A answers)" ok_through 20
    check "B started again on its port" start B hB "$pb"
    check "both up again: 20 requests through nginx, each 200" ok_through 20
fi

# the takeover: whichever instance takes the next analysis is held after
# its worker recorded the runs, and killed with kill -9; the other one
# queues it again once its heartbeat is stale and finishes it
rm -f hA/serve.worker.recorded hB/serve.worker.recorded # the earlier passes
: >hA/serve.worker.recorded.pause
: >hB/serve.worker.recorded.pause
night=$src/fixtures/spark-nightly/steady/night-01.log.gz
n0=$(psql_q 'select count(*) from runs')
ik=$(upload "$B_URL" "$night")
check "an upload to be taken over" test -n "$ik"
held() { test -s hA/serve.worker.recorded || test -s hB/serve.worker.recorded; }
check "one instance's worker recorded it and is held" wait_until held
if [ -s hA/serve.worker.recorded ]; then
    victim=$A_PID vurl=$A_URL survivor=B surl=$B_URL sh=hB serr=$B_ERR
else
    victim=$B_PID vurl=$B_URL survivor=A surl=$A_URL sh=hA serr=$A_ERR
fi
check "its run is in the store before the kill" test "$(night_runs)" = 1
check "...it is running" status_is "$surl" "$ik" running
kill -KILL "$victim"
check "the held instance is killed" wait_until gone "$victim"
# its last heartbeat made an hour old: stale to the survivor's next look
check "...its heartbeat aged an hour" test "$(psql_q "update analyses set heartbeat_at = heartbeat_at - 3600000 where id = '$ik' and state = 'running' returning id")" = "$ik"
: >"$sh/serve.worker.recorded.release" # the survivor's own workers go on
check "the survivor ($survivor) takes it over and finishes it" serve_poll 600 status_is "$surl" "$ik" done
check "...having found its heartbeat stale" has "$serr" "1 analysis whose instance gave no heartbeat for 60000 ms queued again"
check "its run is recorded once" test "$(night_runs)" = 1
check "...the store holds one run more than before it" test "$(psql_q 'select count(*) from runs')" = $((n0 + 1))
check "...its row done, no instance holding it" test "$(psql_q "select state, instance is null from analyses where id = '$ik'")" = 'done|t'

# SIGTERM hands a running analysis back: exit 0, and the next instance
# (a third one, C) finishes it
: >"$sh/serve.worker.pause"
rm -f "$sh/serve.worker"
ih=$(upload "$surl" "$demo/spark-application_1700000000000_0042.zstd")
check "an upload held at the survivor's worker start" bash -c "test -n '$ih'"
wait_until test -s "$sh/serve.worker"
check "...running" status_is "$surl" "$ih" running
if [ "$survivor" = A ]; then spid=$A_PID; else spid=$B_PID; fi
kill -TERM "$spid"
check "SIGTERM: the survivor stops" wait_until gone "$spid"
wait "$spid"
check "...with exit 0" test $? = 0
check "instance C starts on the same DATA" start C hC
check "C finishes the analysis handed back" serve_poll 600 status_is "$C_URL" "$ih" done
kill -TERM "$C_PID"
wait_until gone "$C_PID"
wait "$C_PID"
check "C stops with exit 0" test $? = 0

# --queue counts over every instance: E and F with --queue 2, both
# workers held at their start, one analysis queued through each; the
# next one through either is 429 (each instance alone queued only one)
mkdir -m 700 hE hF
: >hE/serve.worker.pause
: >hF/serve.worker.pause
opts+=(--queue 2)
check "instances E and F start (--queue 2)" start E hE
check "...F" start F hF
q1=$(upload "$E_URL" "$demo/flink-window-bottleneck.json")
q2=$(upload "$F_URL" "$demo/flink-window-bottleneck.json")
both_held() { test -s hE/serve.worker && test -s hF/serve.worker; }
check "two analyses, each instance's worker holding one" wait_until both_held
q3=$(upload "$E_URL" "$demo/flink-window-bottleneck.json")
q4=$(upload "$F_URL" "$demo/flink-window-bottleneck.json")
check "then one queued through E, one through F" test -n "$q3" -a -n "$q4"
check "...both queued" test "$(status "$E_URL" "$q3")/$(status "$E_URL" "$q4")" = queued/queued
code=$(curl -s "${auth[@]}" -o full.json -w '%{http_code}' \
    -F "file=@$demo/flink-window-bottleneck.json" "$E_URL/api/v1/analyses")
check "a third through E: 429, the shared queue is full" test "$code" = 429
check "...saying so" has full.json "the analysis queue is full: retry in"
code=$(curl -s "${auth[@]}" -o /dev/null -w '%{http_code}' \
    -F "file=@$demo/flink-window-bottleneck.json" "$F_URL/api/v1/analyses")
check "...and through F" test "$code" = 429
: >hE/serve.worker.release
: >hF/serve.worker.release
all_done() { for i in "$q1" "$q2" "$q3" "$q4"; do status_is "$E_URL" "$i" done || return 1; done; }
check "released, all four are done" serve_poll 600 all_done
check "...the table holds no refused one" test "$(psql_q "select count(*) from analyses where state <> 'done'")" = 0
kill -TERM "$E_PID" "$F_PID"
wait_until gone "$E_PID" && wait_until gone "$F_PID"
wait "$E_PID"
e=$?
wait "$F_PID"
check "E and F stop with exit 0" test "$e/$?" = 0/0

# the store away (PostgreSQL stopped) and back: an upload meanwhile is
# refused (500) without naming the store to the client, the log names it;
# once it is back, an upload is analyzed
mkdir -m 700 hG
check "instance G starts" start G hG
pg_pause
code=$(curl -s "${auth[@]}" -o down.json -w '%{http_code}' \
    -F "file=@$demo/flink-window-bottleneck.json" "$G_URL/api/v1/analyses")
check "PostgreSQL stopped: an upload is refused (500)" test "$code" = 500
check "...saying the queue is unreachable" has down.json "the analyses queue (the run store) is unreachable"
check "...without naming the store" bash -c "! grep -q 127.0.0.1 down.json"
check "...the log names it" has "$G_ERR" "the shared queue: postgresql://"
check "PostgreSQL back" pg_resume
ig=$(upload "$G_URL" "$demo/flink-window-bottleneck.json")
check "...then an upload through G is analyzed" serve_poll 600 status_is "$G_URL" "$ig" done
check "...every folder of DATA/analyses is a row, none left over" test \
    "$(ls data/analyses | wc -l)" = "$(psql_q 'select count(*) from analyses')"
kill -TERM "$G_PID"
wait_until gone "$G_PID"
wait "$G_PID"
check "G stops with exit 0" test $? = 0
finish
