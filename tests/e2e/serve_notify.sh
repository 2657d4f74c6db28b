#!/usr/bin/env bash
# The server's own webhook notifications (docs/serve.md "Webhook
# notifications", docs/notify.md): `optipipe serve --config` with a signed
# json endpoint on a local receiver (lib/hook_receiver.py, which holds each
# answer until the test writes into its FIFO: events, never sleeps) and an
# endpoint nobody listens on. An upload through the server is done (API)
# while its delivery is still held, so no receiver delays an analysis; the
# receiver gets the signed payload once, naming the analysis and its page
# under --public-origin; the same findings again tell nothing; the dead
# endpoint leaves the analysis done, counts failed in /metrics and the
# delivery log (GET /api/v1/notifications, the page /notifications) says so; a failed analysis
# notifies "failed" once, the same failure again nothing, and after an
# analysis that succeeded, once more.
# Usage: serve_notify.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"
command -v python3 >/dev/null || { echo "SKIP: python3"; exit 77; }
demo=$src/fixtures/demo
cd "$tmp" || exit 1
export HOOK_SECRET=e2e-serve-secret-$$
origin=https://optipipe.example.com

# the receiver, holding each answer until `release`
mkfifo hold
mkdir recv
HOOK_HOLD=$tmp/hold python3 "$here/lib/hook_receiver.py" port recv &
hook_pid=$!
stop_hook() { # the receiver may sit in open(FIFO): a writer frees it
    kill "$hook_pid" 2>/dev/null
    { exec 3<>"$tmp/hold"; } 2>/dev/null && exec 3>&-
    wait "$hook_pid" 2>/dev/null
}
trap 'stop_hook; _serve_cleanup' EXIT
check "the receiver listens" wait_until test -s port
posts() { ls recv | grep -c '^[0-9]*\.json$'; }
got() { test "$(posts)" -ge "$1"; }
release() { got "$1" && echo go >hold; } # release N: once POST N arrived (never blocks otherwise)
# a port nothing listens on: bound and closed again
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat >cfg.lua <<LUA
return { notify = {
  { name = "team", url = "http://127.0.0.1:$(cat port)/hook", kind = "json",
    secret_env = "HOOK_SECRET", timeout_ms = 60000, deadline_ms = 120000 },
  { name = "gone", url = "http://127.0.0.1:$dead/secret/PATH", kind = "slack",
    retries = 1, timeout_ms = 1000, deadline_ms = 3000 },
} }
LUA

upload() { # upload FILE: its id
    curl -s -o up.json -F "file=@$1" "$SERVE_URL/api/v1/analyses" >/dev/null &&
        json_field up.json id
}
metric() { # metric ENDPOINT RESULT: the counter's value
    curl -s "$SERVE_URL/metrics" |
        sed -n "s/^optipipe_notify_deliveries_total{endpoint=\"$1\",result=\"$2\"} //p"
}
metric_is() { test "$(metric "$1" "$2")" = "$3"; }
logged() { # logged ENDPOINT STATUS EVENT: the log has such a row
    serve_get /api/v1/notifications log.json >/dev/null &&
        json_is log.json "any(n['endpoint'] == '$1' and n['status'] == '$2' and n['event'] == '$3' for n in d['notifications'])" True
}

check "server starts with the config's notify" \
    serve_start "$tmp/data" --config cfg.lua --public-origin "$origin"
check "/metrics lists each endpoint by name, nothing yet" metric_is team ok 0
E2E_OUT=$tmp/m.txt
curl -s "$SERVE_URL/metrics" >m.txt
check "... never its URL" sh -c "! grep -q 'secret/PATH\|127.0.0.1:$dead' m.txt"

# 1: a finding, held at the receiver
id1=$(upload "$demo/flink-window-bottleneck.json")
check "the delivery reaches the receiver" serve_poll 600 got 1
check "the analysis is done while its delivery is still held" \
    test "$(serve_status "$id1")" = done
check "... and /metrics has counted no delivery yet" metric_is team ok 0
release 1
check "released: /metrics counts it ok" serve_poll 600 metric_is team ok 1
payload() {
    python3 - recv/1.json "$id1" "$origin" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["path"] == "/hook" and r["signature"] == "ok", r
b = r["body"]
assert b["version"] == 1 and b["type"] == "optipipe.notification" and b["endpoint"] == "team", b
ev = b["events"]
assert ev and all(e["event"] == "finding" for e in ev), ev
assert any(e["rule"] == "flink.bottleneck" for e in ev), ev
for e in ev:
    assert e["analysis"] == sys.argv[2], e
    assert e["link"] == sys.argv[3] + "/analyses/" + sys.argv[2], e
    assert e["fingerprint"] and e["digest"] and e["job"], e
print("ok")
PY
}
E2E_OUT=$tmp/recv/1.json
check "the signed payload tells the findings, the analysis and its page" payload
check "the dead endpoint: failed in /metrics" serve_poll 600 metric_is gone failed 1
check "... and in the delivery log" logged gone failed finding
check "... which shows no URL path" sh -c "! grep -q 'secret/PATH' log.json"
check "... while the receiver's deliveries are logged sent" logged team sent finding
check "the analysis stays done" test "$(serve_status "$id1")" = done

# 2: the same findings tell nothing; a failed analysis tells "failed"
id2=$(upload "$demo/flink-window-bottleneck.json")
check "the same upload again ends done" serve_poll 300 serve_ended "$id2"
echo "not a trace" >junk.txt
idf=$(upload junk.txt)
check "a junk upload fails" serve_poll 300 serve_ended "$idf"
check "... failed" test "$(serve_status "$idf")" = failed
check "its failure reaches the receiver (nothing came of the repeat)" serve_poll 600 got 2
release 2
failed_payload() {
    python3 - recv/2.json "$idf" "$origin" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["signature"] == "ok", r
ev = r["body"]["events"]
assert len(ev) == 1 and ev[0]["event"] == "failed", ev
e = ev[0]
assert e["rule"] is None and e["severity"] == "error", e
assert "no input could be read" in e["message"], e
assert e["analysis"] == sys.argv[2], e
assert e["link"] == sys.argv[3] + "/analyses/" + sys.argv[2], e
print("ok")
PY
}
E2E_OUT=$tmp/recv/2.json
check "a failed event with the reason, the analysis id and its link" failed_payload

# 3: the same failure again: nothing, until an analysis succeeds
idg=$(upload junk.txt)
check "another junk upload fails the same way" serve_poll 300 serve_ended "$idg"
id3=$(upload "$demo/spark-application_1700000000000_0042.zstd")
check "a new upload's findings reach the receiver" serve_poll 600 got 3
release 3
E2E_OUT=$tmp/recv/3.json
check "... they are findings: the repeated failure told nothing" \
    json_is recv/3.json "[e['event'] for e in d['body']['events'] if e['event'] == 'failed'] == [] and d['body']['events'][0]['analysis'] == '$id3'" True
idh=$(upload junk.txt)
check "after a success the same failure..." serve_poll 300 serve_ended "$idh"
check "... is told again" serve_poll 600 got 4
release 4
E2E_OUT=$tmp/recv/4.json
check "... as a failed event of that analysis" \
    json_is recv/4.json "[(e['event'], e['analysis']) for e in d['body']['events']]" "[('failed', '$idh')]"
check "the log lists the failed events sent" logged team sent failed
check "nothing was dropped" metric_is team dropped 0
serve_get "/api/v1/notifications?limit=1" one.json >/dev/null
E2E_OUT=$tmp/one.json
check "?limit=1 lists one row" json_is one.json "len(d['notifications'])" 1
check "... and the endpoints by name" json_is one.json "d['endpoints']" "['team', 'gone']"
code=$(serve_get "/api/v1/notifications?limit=0" bad.json)
check "?limit=0 is a 400" test "$code" = 400
code=$(serve_get /notifications page.html)
E2E_OUT=$tmp/page.html
check "the page /notifications: 200" test "$code" = 200
check "... names the endpoints with their counts" has page.html "<b>gone</b> ([0-9]* ok, [1-9][0-9]* failed, 0 dropped)"
check "... lists the deliveries, failed ones too" has page.html "<td>gone</td><td>finding</td>"
check "... never a URL's path" sh -c "! grep -q 'secret/PATH' page.html"
check "server stops" serve_stop
check "the receiver got exactly 4 POSTs" test "$(posts)" = 4

# a config whose notify is wrong: the server does not start
printf 'return { notify = { { name = "x", url = "ftp://h/", kind = "slack" } } }\n' >bad.lua
"$bin" serve --listen 127.0.0.1:0 --data "$tmp/data2" --config bad.lua >out.txt 2>err.txt
rc=$?
E2E_OUT=$tmp/err.txt
check "a bad notify: exit 2" test "$rc" = 2
check "... naming the file and the key" has err.txt "bad.lua: notify\[1\].url"
finish
