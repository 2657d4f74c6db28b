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
#     the framed report loaded (the strict CSP fits every page).
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

finish
