#!/usr/bin/env bash
# optipipe serve in a real browser (headless Chromium, driven over the
# DevTools protocol by tests/e2e/lib/cdp.py, python3 standard library):
#   - the upload page takes the demo files through its file input and the
#     page's own script uploads them (XMLHttpRequest), shows the upload's
#     and then the analysis' progress, and goes to the analysis page;
#   - a click on a finding's Approve button (a plain form with the CSRF
#     field) comes back with the finding shown approved;
#   - the API and the run store hold the decision;
#   - the console logged no CSP violation, script error or warning, with
#     the framed report loaded (the strict CSP fits every page);
#   - at a phone's width (390 px) no page scrolls sideways (the upload page,
#     the analyses, the analysis, the jobs, the notifications, its runs with the report's
#     charts, their jobs), and /favicon.ico is an SVG;
#   - on a server with --users: a named sign-in (the pages say who), an
#     upload and an approval, then a CLI run with an older decisions file
#     (a conflict), and the finding's page, opened from its "Decision
#     history" link, shows the approval by that user and the conflict.
# Skips (exit 77) with a notice only when no Chromium is installed.
# Usage: serve_browser.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"

browser=""
for b in /usr/bin/chromium chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then
        browser=$(command -v "$b")
        break
    fi
done
if [ -z "$browser" ]; then
    echo "SKIP: no Chromium installed (apt-get install chromium); the serve UI was not checked in a browser"
    exit 77
fi

cd "$src" || exit 1
check "server starts" serve_start "$tmp/data"
[ -n "$SERVE_URL" ] || { finish; exit 1; }

mkdir -p "$tmp/profile"
E2E_OUT=$tmp/cdp.json
E2E_ERR=$tmp/cdp.err
timeout 240 python3 "$here/lib/cdp.py" "$browser" "$SERVE_URL" "$tmp/profile" \
    fixtures/demo/dbt/*.json fixtures/demo/flink-window-bottleneck.json \
    fixtures/demo/spark-application_1700000000000_0042.zstd >"$tmp/cdp.json" 2>"$tmp/cdp.err"
check "the browser uploads, waits, approves (cdp.py)" test -s "$tmp/cdp.json"

id=$(json_field "$tmp/cdp.json" analysis 2>/dev/null)
fp=$(json_field "$tmp/cdp.json" fingerprint 2>/dev/null)
check "the page shows the finding approved" \
    test "$(json_field "$tmp/cdp.json" state 2>/dev/null)" = approved
check "the page showed upload, then analysis progress" python3 - "$tmp/cdp.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["progress"]
assert "Uploading" in p and "Uploaded; analysis queued" in p, p
assert p.index("Uploading") < p.index("Uploaded; analysis queued"), p
PY
check "the console logged nothing (no CSP violation, no script error)" python3 - "$tmp/cdp.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["console"]
assert c == [], json.dumps(c, indent=1)
PY

check "at 390 px no page scrolls sideways (tables scroll in their box)" python3 - "$tmp/cdp.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["narrow"]
runs = [p for p in n if p.startswith("/runs/")]
assert len(runs) >= 3 and any(p.startswith("/jobs/") for p in n), n  # spark, dbt, flink
assert "/notifications" in n, n
assert all(v <= 0 for v in n.values()), (n, r["narrow_culprits"])
PY
check "/favicon.ico is an SVG icon, not a 404" python3 - "$tmp/cdp.json" <<'PY'
import json, sys
i = json.load(open(sys.argv[1]))["favicon"]
assert i["status"] == 200 and i["type"].startswith("image/svg+xml"), i
PY

E2E_OUT=$tmp/api.json
E2E_ERR=$SERVE_ERR
curl -s "$SERVE_URL/api/v1/analyses/$id" >"$tmp/api.json"
check "the API shows the decision of $fp" python3 - "$tmp/api.json" "$fp" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["report"]
f = [f for f in rep["findings"] if f["fingerprint"] == sys.argv[2]]
assert f and f[0]["decision"]["status"] == "approved", f
assert f[0]["decision"]["comment"] == "from the browser test", f[0]["decision"]
assert f[0]["decision"]["decided_by"] == "local", f[0]["decision"]
PY

serve_stop
E2E_OUT=$tmp/store.txt
"$bin" history show --history "$tmp/data/history.db" \
    "$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["report"]
print([f["run"] for f in r["findings"] if f["fingerprint"] == sys.argv[2]][0])' \
    "$tmp/api.json" "$fp")" >"$tmp/store.txt" 2>&1
check "the run store holds the decision" grep -q "\[${fp:0:8}\] approved" "$tmp/store.txt"

# ---- a named sign-in, approve, a conflict, the audit trail -------------------------------
# a server with --users: the browser signs in with decide-user's token, uploads,
# approves; then a CLI run on the same store brings an older decisions file (a
# conflict the store's newer decision wins); the browser opens the finding's
# page from its "Decision history" link and reads the trail.
"$bin" serve user add decide-user --role decide --users "$tmp/users.txt" >"$tmp/tok" 2>/dev/null
check "named server starts" serve_start "$tmp/data2" --users "$tmp/users.txt"
mkdir -p "$tmp/profile2" "$tmp/steps"
E2E_OUT=$tmp/cdp2.json
E2E_ERR=$tmp/cdp2.err
OP_CDP_TOKEN=$(cat "$tmp/tok") OP_CDP_STEPS=$tmp/steps timeout 300 python3 "$here/lib/cdp.py" \
    "$browser" "$SERVE_URL" "$tmp/profile2" fixtures/demo/flink-window-bottleneck.json \
    >"$tmp/cdp2.json" 2>"$tmp/cdp2.err" &
cdp=$!
check "the browser signs in, uploads and approves" wait_until test -s "$tmp/steps/approved.json"
fp2=$(json_field "$tmp/steps/approved.json" fingerprint 2>/dev/null)
python3 - "$tmp/old.json" "$fp2" <<'PY'
import json, sys
json.dump({"optipipe_baseline": 1, "decisions": [{"fingerprint": sys.argv[2], "rule": "flink.bottleneck",
    "run": "r", "status": "dismissed", "reason": "an old checkout says no",
    "decided_at": "2020-01-01T00:00:00Z"}]}, open(sys.argv[1], "w"))
PY
"$bin" analyze --no-config --history "$tmp/data2/history.db" --baseline "$tmp/old.json" -q \
    fixtures/demo/flink-window-bottleneck.json >/dev/null 2>"$tmp/cli.err"
: >"$tmp/steps/go"
wait "$cdp"
check "the browser read the finding's page (cdp.py)" test -s "$tmp/cdp2.json"
check "the pages said who signed in" python3 - "$tmp/cdp2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert "Signed in as decide-user (decide)" in r["signed_in"], r["signed_in"]
assert r["state"] == "approved", r["state"]
PY
check "the finding's page: approved by decide-user, the trail and the conflict" python3 - "$tmp/cdp2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert "approved" in r["decision"] and "by decide-user" in r["decision"], r["decision"]
t = r["trail"]
assert [x["cls"] for x in t] == ["conflict", "change"], t
assert "decide-user" in t[1]["text"] and "open" in t[1]["text"] and "approved" in t[1]["text"], t[1]
c = t[0]["text"]
assert "old.json" in c and "dismissed" in c and "an old checkout says no" in c, c
assert "not applied" in c and "approved" in c, c
PY
check "no console message on the named pages either" python3 - "$tmp/cdp2.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["console"]
assert c == [], json.dumps(c, indent=1)
PY
serve_stop

finish
