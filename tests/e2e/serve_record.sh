#!/usr/bin/env bash
# An analysis of `optipipe serve` whose recording fails is not "done"
# (docs/api.md): with another writer holding DATA/history.db (a python3
# sqlite3 connection in a write transaction, released through a fifo)
# and OPTIPIPE_STORE_WAIT_MS=0, the worker exits 6 and the analysis ends
# record-failed with the reason, its report still there; the page says
# so and offers a Retry form; POST /api/v1/analyses/{id}/retry (409 while
# it is not failed) queues it again and, the lock gone, it ends done and
# its runs are in the store.
# Usage: serve_record.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
. "$(dirname "$0")/lib/store_lock.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1
export OPTIPIPE_STORE_WAIT_MS=0 # the worker gives up at once on a held lock

upload() { # upload FILE: its id
    curl -s -o up.json -F "file=@$demo/$1" \
        "$SERVE_URL/api/v1/analyses" >/dev/null && json_field up.json id
}
nruns() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])' data/history.db; }

check "server starts" serve_start "$tmp/data"
id=$(upload flink-window-bottleneck.json)
check "a first analysis ends" serve_poll 300 serve_ended "$id"
check "...done (it made the store)" test "$(serve_status "$id")" = done
n0=$(nruns)

check "another writer holds the store" lock_store data/history.db
id=$(upload spark-application_1700000000000_0042.zstd) # runs of its own
check "the analysis ends" serve_poll 300 serve_ended "$id"
serve_get "/api/v1/analyses/$id" a.json >/dev/null
E2E_OUT=a.json
check "...record-failed, not done" json_is a.json "d['status']" record-failed
check "...exit code 6" json_is a.json "d['exit_code']" 6
check "...the reason names the held store" json_is a.json "'another writer held the run store' in d['error']" True
check "...its report is there" json_is a.json "len(d['report']['findings']) > 0" True
check "...and nothing of it is in the store" test "$(nruns)" = "$n0"
serve_get "/analyses/$id" page.html >/dev/null
E2E_OUT=page.html
check "the page says it is not recorded" has page.html "not recorded"
check "...with a Retry form" has page.html "action=\"/analyses/$id/retry\""
code=$(curl -s -o r.json -w '%{http_code}' -X POST "$SERVE_URL/api/v1/analyses/$id/retry")
E2E_OUT=r.json
check "retry: 202 while the lock is still held" test "$code" = 202
check "...queued" json_is r.json "d['status']" queued
check "...and it ends record-failed again" serve_poll 300 serve_ended "$id"
check "...(the lock still held)" test "$(serve_status "$id")" = record-failed

check "the other writer lets go" unlock_store
code=$(curl -s -o r.json -w '%{http_code}' -X POST "$SERVE_URL/api/v1/analyses/$id/retry")
check "retry: 202" test "$code" = 202
check "the retried analysis ends" serve_poll 300 serve_ended "$id"
check "...done" test "$(serve_status "$id")" = done
check "...and its run is in the store" test "$(nruns)" -gt "$n0"
code=$(curl -s -o r.json -w '%{http_code}' -X POST "$SERVE_URL/api/v1/analyses/$id/retry")
check "a done analysis is not retried: 409" test "$code" = 409
code=$(curl -s -o r.json -w '%{http_code}' -X POST "$SERVE_URL/api/v1/analyses/0123456789abcdef/retry")
check "an unknown one: 404" test "$code" = 404
curl -s "$SERVE_URL/metrics" >m.txt
E2E_OUT=m.txt
check "metrics count the record-failed ends" has m.txt 'optipipe_analyses_total{state="record-failed"} 2'
check "server stops" serve_stop
finish
