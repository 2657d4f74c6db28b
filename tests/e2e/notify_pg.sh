#!/usr/bin/env bash
# Webhook notifications over a PostgreSQL run store (docs/notify.md, the
# notify_said and notify_log tables of store_pg.c): the first analysis
# tells the receiver, the second with the same findings tells nothing,
# and `history notifications` lists the deliveries as on SQLite. Skipped
# (77) when PostgreSQL is not installed or not compiled in.
# Usage: notify_pg.sh OPTIPIPE SOURCE_DIR
set -u
bin=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$src/tests/lib/pg.sh"
pg_e2e_start "$bin"
rpid=
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; pg_stop; rm -rf "$tmp"' EXIT
unset OPTIPIPE_HISTORY
export HOOK_SECRET=pg-secret-$$
F=$src/fixtures/demo/flink-window-bottleneck.json
uri=$(pg_createdb notify) || { echo "FAIL: createdb"; exit 1; }

mkdir -p "$tmp/r"
python3 "$here/lib/hook_receiver.py" "$tmp/r.port" "$tmp/r" &
rpid=$!
wait_until test -s "$tmp/r.port" || { echo "FAIL: no receiver"; exit 1; }
cat >"$tmp/n.lua" <<LUA
return { notify = {
  { name = "team", url = "http://127.0.0.1:$(cat "$tmp/r.port")/hook",
    kind = "json", secret_env = "HOOK_SECRET" },
} }
LUA
got() { ls "$tmp/r" | grep -c '^[0-9]*\.json$'; }
run() { "$bin" analyze --config "$tmp/n.lua" --history "$uri" "$F" >"$E2E_OUT" 2>"$E2E_ERR"; rc=$?; }

run
check "PostgreSQL: analyze exits 0" test "$rc" = 0
check "PostgreSQL: the receiver got one signed POST" sh -c "[ $(got) = 1 ] && grep -q '\"signature\": \"ok\"' '$tmp/r/1.json'"
run
check "PostgreSQL: the same findings again tell nothing" test "$(got)" = 1
"$bin" history notifications --history "$uri" --format json >"$E2E_OUT" 2>"$E2E_ERR"
listed() {
    python3 - "$E2E_OUT" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 2, rows
assert all(r["status"] == "sent" and r["endpoint"] == "team" and r["attempts"] == 1 for r in rows), rows
print("ok")
PY
}
check "PostgreSQL: history notifications lists the two deliveries" listed
finish
