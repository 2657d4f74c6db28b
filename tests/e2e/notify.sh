#!/usr/bin/env bash
# Webhook notifications from `analyze` (docs/notify.md), against a local
# receiver (lib/hook_receiver.py) that checks the HMAC signature and
# records each POST as a file the test waits for (no sleeps): the json
# endpoint gets a signed, versioned document and the slack one {"text"};
# a second run with the same findings sends nothing, a changed finding
# sends again; a receiver answering 500 then 200 shows the retry (2
# attempts in the log); an unreachable receiver leaves the exit code as
# it was, stderr names the endpoint and the log says failed; a missing
# secret sends nothing and says so; a failed analysis is a failed event;
# without a run store every run sends; --no-notify sends none.
# Usage: notify.sh OPTIPIPE SOURCE_DIR
set -u
bin=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
command -v python3 >/dev/null || { echo "SKIP: python3"; exit 77; }
F=$src/fixtures/demo/flink-window-bottleneck.json
export HOOK_SECRET=e2e-secret-$$
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# receiver NAME [STATUSES]: starts one into $tmp/NAME/, its port in $port
receiver() {
    mkdir -p "$tmp/$1"
    python3 "$here/lib/hook_receiver.py" "$tmp/$1.port" "$tmp/$1" "${2:-200}" &
    pids+=($!)
    wait_until test -s "$tmp/$1.port" || return 1
    port=$(cat "$tmp/$1.port")
}
got() { ls "$tmp/$1" | grep -c '^[0-9]*\.json$'; } # got NAME: POSTs received
# config FILE PORT [EXTRA]: a json and a slack endpoint on the receiver
config() {
    cat >"$1" <<LUA
return { ${3:-} notify = {
  { name = "team", url = "http://127.0.0.1:$2/hook", kind = "json",
    secret_env = "HOOK_SECRET", retries = 2, timeout_ms = 5000 },
  { name = "chat", url = "http://127.0.0.1:$2/services/T0/B0/SECRETPATH",
    kind = "slack", events = { "finding", "regression" }, retries = 1 },
} }
LUA
}
run() { # run CONFIG STORE: analyze, its exit code in $rc
    "$bin" analyze --config "$1" ${2:+--history "$2"} "$F" >"$E2E_OUT" 2>"$E2E_ERR"
    rc=$?
}

receiver a
config "$tmp/a.lua" "$port"
run "$tmp/a.lua" "$tmp/h.db"
check "analyze with webhooks exits as without them" test "$rc" = 0
check "one POST per endpoint" test "$(got a)" = 2
check "stderr counts the events notified" has "$E2E_ERR" "notified 4 events"
payloads() {
    python3 - "$tmp/a" <<'PY'
import json, os, sys
d = sys.argv[1]
recs = [json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d)) if f.endswith(".json")]
team = [r for r in recs if r["path"] == "/hook"][0]
chat = [r for r in recs if r["path"] != "/hook"][0]
assert team["signature"] == "ok", team["signature"]
assert team["content_type"] == "application/json"
b = team["body"]
assert b["version"] == 1 and b["type"] == "optipipe.notification", b
assert b["endpoint"] == "team" and b["more"] == 0
ev = b["events"]
assert len(ev) == 2 and all(e["event"] == "finding" for e in ev), ev
assert {e["severity"] for e in ev} <= {"warning", "error"}, ev
for k in ("rule", "fingerprint", "job", "source", "run_id", "message", "digest"):
    assert all(e[k] for e in ev), k
assert chat["signature"] == "none"
assert set(chat["body"]) == {"text"}, chat["body"]
assert chat["body"]["text"].startswith("optipipe: 2 alerts"), chat["body"]
assert "`flink.bottleneck`" in chat["body"]["text"]
print("ok")
PY
}
check "the json payload is signed and versioned, the slack one is text" payloads

run "$tmp/a.lua" "$tmp/h.db"
check "a second run with the same findings sends nothing" test "$(got a)" = 2
check "... and says nothing of it" sh -c "! grep -q notif '$E2E_ERR'"
config "$tmp/b.lua" "$port" 'rules = { ["flink.bottleneck"] = "error" },'
run "$tmp/b.lua" "$tmp/h.db"
check "a changed finding sends again, to both endpoints" test "$(got a)" = 4
changed() {
    python3 - "$tmp/a/3.json" "$tmp/a/4.json" <<'PY'
import json, sys
for p in sys.argv[1:]:
    r = json.load(open(p))
    if r["path"] == "/hook":
        ev = r["body"]["events"]
        assert len(ev) == 1 and ev[0]["rule"] == "flink.bottleneck", ev
        assert ev[0]["severity"] == "error", ev
        assert r["signature"] == "ok"
print("ok")
PY
}
check "... with only the changed finding" changed

log_rows() { # log_rows DB: endpoint|status|attempts|error per row, oldest first
    python3 - "$1" <<'PY'
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(
        "SELECT endpoint, status, attempts, coalesce(error, '') FROM notify_log ORDER BY seq"):
    print("|".join(str(x) for x in r))
PY
}
log_rows "$tmp/h.db" >"$tmp/log.txt"
check "the delivery log has a sent row per event and endpoint" \
    test "$(grep -c '|sent|1|$' "$tmp/log.txt")" = 6

"$bin" history notifications --history "$tmp/h.db" --format json >"$E2E_OUT" 2>"$E2E_ERR"
listed() {
    python3 - "$E2E_OUT" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 6, rows
assert rows[0]["status"] == "sent" and rows[0]["error"] is None, rows[0]
assert {r["endpoint"] for r in rows} == {"team", "chat"}, rows
print("ok")
PY
}
check "history notifications lists the log, newest first" listed
"$bin" history notifications --history "$tmp/h.db" --limit 1 >"$E2E_OUT" 2>"$E2E_ERR"
check "history notifications --limit 1: one line" test "$(wc -l <"$E2E_OUT")" = 1

# 500, then 200: the same POST again, after a back-off
receiver r 500,200
config "$tmp/r.lua" "$port"
run "$tmp/r.lua" "$tmp/r.db"
check "a 500 is retried: three POSTs for two endpoints" test "$(got r)" = 3
log_rows "$tmp/r.db" >"$tmp/rlog.txt"
check "the log says 2 attempts for the endpoint that got the 500" \
    has "$tmp/rlog.txt" "^team|sent|2|$"
check "... and 1 for the other" has "$tmp/rlog.txt" "^chat|sent|1|$"

# an unreachable receiver: the port of one that stopped
kill "${pids[1]}" && wait "${pids[1]}" 2>/dev/null
"$bin" analyze --no-notify --config "$tmp/r.lua" "$F" >/dev/null 2>&1
want=$?
run "$tmp/r.lua" "$tmp/u.db"
check "unreachable: the exit code is the analysis's" test "$rc" = "$want"
check "unreachable: stderr names the endpoint" has "$E2E_ERR" "notify: team (http://127.0.0.1:$port/…): 2 events not delivered"
check "unreachable: the URL's path is never shown" sh -c "! grep -q SECRETPATH '$E2E_ERR'"
log_rows "$tmp/u.db" >"$tmp/ulog.txt"
check "unreachable: the log says failed, after every attempt" \
    has "$tmp/ulog.txt" "^team|failed|3|POST http://127.0.0.1:$port/…: "
run "$tmp/r.lua" "$tmp/u.db"
check "unreachable: nothing was remembered as said (tried again)" \
    test "$(log_rows "$tmp/u.db" | grep -c failed)" = 8

# a missing secret: nothing sent, said
receiver s
config "$tmp/s.lua" "$port"
(unset HOOK_SECRET; "$bin" analyze --config "$tmp/s.lua" "$F" >"$E2E_OUT" 2>"$E2E_ERR")
check "no secret: the json endpoint gets nothing and stderr says why" \
    has "$E2E_ERR" "HOOK_SECRET is not set"
check "no secret: the slack one is still told" test "$(got s)" = 1

# without a run store every run sends; --no-notify none
run "$tmp/s.lua" ""
run "$tmp/s.lua" ""
check "without a run store every run sends" test "$(got s)" = 5
"$bin" analyze --no-notify --config "$tmp/s.lua" "$F" >/dev/null 2>&1
check "--no-notify sends nothing" test "$(got s)" = 5

# a failed analysis: the json endpoint (events: all) hears of it
echo hello >"$tmp/junk.txt"
"$bin" analyze --config "$tmp/s.lua" "$tmp/junk.txt" >"$E2E_OUT" 2>"$E2E_ERR"
rc=$?
check "a failed analysis exits 3 still" test "$rc" = 3
check "a failed analysis is told to the endpoint that takes failed" test "$(got s)" = 6
failed_event() {
    python3 - "$tmp/s/6.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["path"] == "/hook" and r["signature"] == "ok", r
ev = r["body"]["events"]
assert len(ev) == 1 and ev[0]["event"] == "failed", ev
assert "no input could be read" in ev[0]["message"], ev
assert ev[0]["rule"] is None
print("ok")
PY
}
check "... as a failed event with the error" failed_event

# a bad endpoint is a config error naming the file and the entry
printf 'return { notify = { { name = "x", url = "ftp://h/", kind = "slack" } } }\n' >"$tmp/bad.lua"
"$bin" analyze --config "$tmp/bad.lua" "$F" >"$E2E_OUT" 2>"$E2E_ERR"
rc=$?
check "a bad endpoint: exit 2" test "$rc" = 2
check "... naming the file and the key" has "$E2E_ERR" "bad.lua: notify\[1\].url"

finish
