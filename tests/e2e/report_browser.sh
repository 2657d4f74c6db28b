#!/usr/bin/env bash
# The HTML report of the demo in a real browser (headless Chromium):
#   - the page logs nothing to the console (no script error, no blocked
#     request, no Content-Security-Policy violation);
#   - its self-test (the page's one inline script, run by opening it as
#     report.html#selftest) finds every expected chart's SVG rendered with
#     a non-zero size, and writes that verdict into <pre id="selftest">,
#     which --dump-dom shows us;
#   - the script's CSP hash matches the script, so it is allowed to run;
#   - a screenshot is saved next to the binary (build/report-demo.png) with
#     the report itself (build/report-demo.html) for people to look at.
# Skips (exit 77) with a notice only when no Chromium is installed;
# scripts/test installs Debian's chromium when it can.
# Usage: report_browser.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=/nonexistent
out_dir=$(dirname "$bin")

browser=""
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then
        browser=$b
        break
    fi
done
if [ -z "$browser" ]; then
    echo "SKIP: no Chromium installed (apt-get install chromium); the HTML report was not checked in a browser"
    exit 77
fi


# run_browser LOG ARGS...: headless, offline, a fresh profile every time.
run_browser() {
    local log=$1 profile
    shift
    profile=$(mktemp -d "$tmp/profile.XXXXXX")
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-quic --no-first-run --user-data-dir="$profile" \
        --enable-logging=stderr --v=0 "$@" 2>"$log"
}

cd "$src" || exit 1
"$bin" analyze --format html --deterministic -o "$tmp/report.html" fixtures/demo 2>"$tmp/err"
check "html report written" test -s "$tmp/report.html"

check "the inline script matches its CSP hash" python3 - "$tmp/report.html" <<'PY'
import base64, hashlib, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
assert len(scripts) == 1, len(scripts)
digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
csp = re.search(r"script-src '([^']*)'", page).group(1)
assert csp == "sha256-" + digest, (csp, digest)
PY

run_browser "$tmp/dom.log" --dump-dom "file://$tmp/report.html#selftest" >"$tmp/dom.html"
check "chromium loads the page" test -s "$tmp/dom.html"
check "no console message (errors, CSP violations, blocked loads)" \
    bash -c "! grep -E ':CONSOLE|Uncaught|Refused to' '$tmp/dom.log'"
check "every chart is rendered with a size" python3 - "$tmp/dom.html" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', dom, re.S)
assert m and m.group(1).strip(), "the self-test wrote no verdict"
verdict = json.loads(html.unescape(m.group(1)))
assert verdict["ok"], verdict
seen = {c["chart"] for c in verdict["charts"] if c["width"] > 0 and c["height"] > 0}
want = {"flink-graph", "flink-checkpoints", "spark-timeline", "spark-tasks",
        "dbt-gantt", "dbt-history"}
assert want <= seen, "missing: %s" % sorted(want - seen)
print(json.dumps(verdict))
PY

cp "$tmp/report.html" "$out_dir/report-demo.html" 2>/dev/null
run_browser "$tmp/shot.log" --hide-scrollbars --window-size=1280,2000 \
    --screenshot="$out_dir/report-demo.png" "file://$tmp/report.html" >/dev/null
check "screenshot saved as $out_dir/report-demo.png" test -s "$out_dir/report-demo.png"
echo "screenshot: $out_dir/report-demo.png (report: $out_dir/report-demo.html)"

finish
