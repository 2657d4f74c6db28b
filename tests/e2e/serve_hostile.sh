#!/usr/bin/env bash
# optipipe serve against a hostile client (docs/security.md): attacks on the
# HTTP surface that other serve_*.sh tests do not cover. Each block is a
# regression test of a problem found in a red-team review. (A redirect out
# of --fetch-allow is serve_hostile_jobs.sh's.)
#   - behind an https --public-origin, cookies are Secure even when the
#     proxy sends no X-Forwarded-Proto
#   - a JSON body with a \u0000 escape is refused (400), not cut at the NUL
#     (a decision's comment lost its tail silently)
#   - error bodies do not show the server's folder (DATA's absolute path)
#   (and, as a guard of what held:) a dbt model name and a decision comment
#   with markup stay inert on every page, each page has the CSP header
# Usage: serve_hostile.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

check "server starts" serve_start "$tmp/data"

# ---- \u0000 in a JSON body ----------------------------------------------------
E2E_OUT=$tmp/out
check "a decision whose comment holds \\u0000: 400" test "$(serve_post_json /api/v1/decisions \
    '{"fingerprint":"0123456789abcdef","status":"approved","comment":"ok\u0000 gone"}' "$tmp/out")" = 400
check "the error names the NUL" has "$tmp/out" 'NUL'
check "an escaped backslash before u0000 is no NUL: not 400" test "$(serve_post_json /api/v1/decisions \
    '{"fingerprint":"0123456789abcdef","status":"approved","comment":"ok\\u0000"}' "$tmp/out")" = 404
check "the 404 names no server path" sh -c "! grep -q '$tmp' '$tmp/out'"
check "the 404 says DATA/history.db" has "$tmp/out" 'DATA/history.db'
serve_stop

# ---- Secure cookies behind an https --public-origin ---------------------------
check "server with an https --public-origin starts" \
    serve_start "$tmp/data2" --public-origin https://optipipe.example.com
curl -s -D "$tmp/hdr" -o "$tmp/out" -H 'Host: optipipe.example.com' "$SERVE_URL/login"
E2E_OUT=$tmp/hdr
check "the CSRF cookie is set" has "$tmp/hdr" '^Set-Cookie: op_csrf='
check "no X-Forwarded-Proto, still Secure" has "$tmp/hdr" '^Set-Cookie: op_csrf=.*; Secure'
serve_stop

# ---- hostile dbt model names and comments on every page (held) ------------------
check "server starts (pages)" serve_start "$tmp/data3"
python3 - "$2/fixtures/dbt/slow-models/run_results-2024-05-20.json" "$tmp/run_results.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["unique_id"] += '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
json.dump(d, open(sys.argv[2], "w"))
PYEOF
curl -s -o "$tmp/out" -F file=@"$tmp/run_results.json" "$SERVE_URL/api/v1/analyses"
id=$(json_field "$tmp/out" id)
check "the hostile dbt analysis ends" serve_poll 300 serve_ended "$id"
serve_get "/api/v1/analyses/$id" "$tmp/a.json" >/dev/null
fp=$(json_field "$tmp/a.json" report.findings.0.fingerprint)
check "a hostile comment is stored" test "$(serve_post_json /api/v1/decisions \
    "{\"fingerprint\":\"$fp\",\"status\":\"approved\",\"comment\":\"<script>alert(4)</script>\"}" \
    "$tmp/out")" = 200
job=$(curl -s "$SERVE_URL/api/v1/jobs" | python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.load(sys.stdin)["jobs"][0]["job"], safe=""))')
inert_page() { # PATH: 200, the CSP header, nothing of the markup as markup
    curl -s -D "$tmp/ph" -o "$tmp/page" "$SERVE_URL$1" &&
        grep -q '^HTTP/1.1 200' "$tmp/ph" && grep -qi '^Content-Security-Policy: ' "$tmp/ph" &&
        ! grep -qE '<script>alert|<img src=x|"><img' "$tmp/page"
}
E2E_OUT=$tmp/page
for p in / /analyses "/analyses/$id" "/analyses/$id/report.html" /jobs "/jobs/$job"; do
    check "inert and under CSP: $p" inert_page "$p"
done
inert_page "/analyses/$id" >/dev/null
check "the analysis page shows the comment, escaped" has "$tmp/page" '&lt;script&gt;alert(4)'
check "and the model name, escaped" has "$tmp/page" '&lt;img src=x onerror=alert(2)&gt;'
serve_stop

no_sanitizer_report() {
    ! grep -l -E 'runtime error|ERROR: (Address|Leak)Sanitizer' "$tmp"/serve.*.err \
        "$tmp"/data*/analyses/*/worker.log 2>/dev/null
}
check "no sanitizer report from the servers or their workers" no_sanitizer_report

finish
