#!/usr/bin/env bash
# The HTML pages of optipipe serve with curl (the browser test is
# serve_browser.sh):
#   - every page carries the strict CSP header and <meta name="csrf-token">,
#     links /static/app.js and /static/app.css only, and has no inline
#     script, style or event handler; the assets are served with their types;
#   - the no-script upload form: without the CSRF field 403, with it 303 to
#     the analysis page;
#   - an analysis whose run has a hostile name and id (markup in both):
#     the analysis, jobs, job, run and diff pages show them escaped;
#   - decisions from a form: 303 back to the finding's anchor; a bad
#     fingerprint or status 400; no CSRF field 403; an unknown or malformed
#     id 404; the framed report has no script and no inline style;
#   - a malformed job name or run reference is refused.
# Usage: serve_ui.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
. "$here/lib/serve.sh"
cd "$src" || exit 1

check "server starts" serve_start "$tmp/data"
[ -n "$SERVE_URL" ] || { finish; exit 1; }
U=$SERVE_URL
jar=$tmp/cookies
E2E_ERR=$SERVE_ERR

# get PATH OUT: the page into OUT, its headers into OUT.h; prints the status
get() {
    curl -s -b "$jar" -c "$jar" -D "$2.h" -o "$2" -w '%{http_code}' "$U$1"
}

# strict FILE: the page and its headers keep the strict policy
strict() {
    grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'" "$1.h" &&
        ! grep -qiE '<script>|<script [^>]*>[^<]|<style|<[^>]* style=|<[^>]*[[:space:]]on[a-z]+=' "$1" &&
        grep -q '<script src="/static/app.js" defer></script>' "$1" &&
        grep -q '<link rel="stylesheet" href="/static/app.css">' "$1"
}

# inert FILE: nothing of the hostile name survives as markup
inert() { ! grep -qE '<script>alert|<img src=x|"><img' "$1"; }

E2E_OUT=$tmp/up.html
check "GET / is 200" test "$(get / "$tmp/up.html")" = 200
check "the upload page is strict" strict "$tmp/up.html"
check "it has the CSRF meta tag" grep -q '<meta name="csrf-token" content="[0-9a-f]\{64\}">' "$tmp/up.html"
check "its form posts multipart to /analyses" \
    grep -q '<form id="upload" method="post" action="/analyses" enctype="multipart/form-data"' "$tmp/up.html"
tok=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$tmp/up.html" | head -1)
check "its form carries the CSRF field" test ${#tok} = 64

E2E_OUT=$tmp/js.h
check "app.js is served as JavaScript" test "$(get /static/app.js "$tmp/js")" = 200
check "  with its type" grep -qi '^Content-Type: text/javascript' "$tmp/js.h"
check "app.css is served as CSS" test "$(get /static/app.css "$tmp/css")" = 200
check "  with its type" grep -qi '^Content-Type: text/css' "$tmp/css.h"
check "  holding the report's look" grep -q 'finding.error' "$tmp/css"

# a Spark log whose application name and id are markup
printf '%s\n' '{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}' \
    '{"Event":"SparkListenerApplicationStart","App Name":"<script>alert(1)</script>\"><img src=x onerror=alert(2)>","App ID":"app-<script>alert(3)</script>-1","Timestamp":1700000000000,"User":"u"}' \
    '{"Event":"SparkListenerApplicationEnd","Timestamp":1700000100000}' >"$tmp/eventlog-hostile"

E2E_OUT=$tmp/post.h
code=$(curl -s -b "$jar" -o /dev/null -D "$tmp/post.h" -w '%{http_code}' \
    -F file=@"$tmp/eventlog-hostile" "$U/analyses")
check "the form post without the CSRF field is 403" test "$code" = 403
code=$(curl -s -b "$jar" -o /dev/null -D "$tmp/post.h" -w '%{http_code}' -F csrf="$tok" \
    -F file=@"$tmp/eventlog-hostile" -F file=@fixtures/demo/spark-application_1700000000000_0042.zstd \
    -F url= "$U/analyses")
check "the form post with it is 303" test "$code" = 303
id=$(sed -n 's#^Location: /analyses/\([0-9a-f]\{16\}\)\r\?$#\1#Ip' "$tmp/post.h")
check "  to the analysis page" test ${#id} = 16

state() { curl -s "$U/api/v1/analyses/$id" | grep -q "\"status\": *\"$1\""; }
E2E_OUT=$tmp/wait.html
get "/analyses/$id" "$tmp/wait.html" >/dev/null
if grep -q 'data-poll=' "$tmp/wait.html"; then
    check "the waiting page polls and links itself" \
        grep -q "<a href=\"/analyses/$id\">Refresh</a>" "$tmp/wait.html"
fi
check "the analysis finishes" serve_poll 600 state done

E2E_OUT=$tmp/a.html
check "the analysis page is 200" test "$(get "/analyses/$id" "$tmp/a.html")" = 200
check "  strict" strict "$tmp/a.html"
check "  the hostile run name escaped" inert "$tmp/a.html"
check "  and shown" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img' "$tmp/a.html"
check "  the report framed, sandboxed" \
    grep -q "<iframe class=\"report\" sandbox src=\"/analyses/$id/report.html\"" "$tmp/a.html"
check "  a patches link" grep -q "href=\"/analyses/$id/patches?format=text\" download" "$tmp/a.html"
fp=$(sed -n 's/.*name="fingerprint" value="\([0-9a-f]\{16\}\)".*/\1/p' "$tmp/a.html" | head -1)
check "  a decision form per finding" test ${#fp} = 16

E2E_OUT=$tmp/r.html
check "the framed report is 200" test "$(get "/analyses/$id/report.html" "$tmp/r.html")" = 200
check "  may be framed by our pages only" grep -qi "frame-ancestors 'self'" "$tmp/r.html.h"
check "  has no script, no inline style" bash -c "! grep -qE '<script|<style| style=' '$tmp/r.html'"
check "  the hostile name escaped" inert "$tmp/r.html"

decide() { # decide FIELDS...: posts the decision form; prints the status
    curl -s -b "$jar" -o /dev/null -D "$tmp/d.h" -w '%{http_code}' "$@" \
        "$U/analyses/$id/decisions"
}
E2E_OUT=$tmp/d.h
check "a decision without the CSRF field is 403" \
    test "$(decide --data-urlencode fingerprint="$fp" --data-urlencode status=approved)" = 403
check "a bad fingerprint is 400" \
    test "$(decide --data-urlencode csrf="$tok" --data-urlencode fingerprint=0000000000000000 --data-urlencode status=approved)" = 400
check "a bad status is 400" \
    test "$(decide --data-urlencode csrf="$tok" --data-urlencode fingerprint="$fp" --data-urlencode status=yes)" = 400
check "a decision is 303" \
    test "$(decide --data-urlencode csrf="$tok" --data-urlencode fingerprint="$fp" --data-urlencode status=dismissed --data-urlencode 'comment=<img src=x onerror=alert(4)>')" = 303
check "  back to the finding" grep -qi "^Location: /analyses/$id#f-$fp" "$tmp/d.h"
get "/analyses/$id" "$tmp/a2.html" >/dev/null
E2E_OUT=$tmp/a2.html
check "the page shows it dismissed" \
    grep -A1 "id=\"f-$fp\"" "$tmp/a2.html" | grep -q 'state-dismissed'
check "  with the comment escaped" grep -q '&lt;img src=x onerror=alert(4)&gt;' "$tmp/a2.html"
check "unknown analysis is 404" test "$(get /analyses/0123456789abcdef "$tmp/x")" = 404
check "malformed analysis id is 404" test "$(get /analyses/..%2F..%2Fetc "$tmp/x")" = 404
cfp=$(python3 - "$tmp/a.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
arts = re.findall(r'(<article class="finding[^"]*" id="f-([0-9a-f]{16})".*?</article>)', page, re.S)
print(next(fp for body, fp in arts if '<pre class="change"' in body))
PY
)
check "a finding with a change is approved" \
    test "$(decide --data-urlencode csrf="$tok" --data-urlencode fingerprint="$cfp" --data-urlencode status=approved)" = 303
check "the patches download as text" \
    test "$(get "/analyses/$id/patches?format=text" "$tmp/p")" = 200
check "  an attachment" grep -qi "^Content-Disposition: attachment; filename=\"optipipe-patches-$id.txt\"" "$tmp/p.h"
check "  of text" grep -qi '^Content-Type: text/plain' "$tmp/p.h"
E2E_OUT=$tmp/p
check "  with the approved change" grep -q "\[$cfp\]" "$tmp/p"
check "the patches download as JSON" test "$(get "/analyses/$id/patches" "$tmp/pj")" = 200
check "  an attachment" grep -qi "^Content-Disposition: attachment; filename=\"optipipe-patches-$id.json\"" "$tmp/pj.h"

E2E_OUT=$tmp/jobs.html
check "the jobs page is 200" test "$(get /jobs "$tmp/jobs.html")" = 200
check "  strict" strict "$tmp/jobs.html"
check "  hostile job escaped" inert "$tmp/jobs.html"
check "  with a trend chart" grep -q 'data-chart="trend"' "$tmp/jobs.html"
job=$(sed -n 's/.*<a href="\(\/jobs\/[^"]*script[^"]*\)">.*/\1/p' "$tmp/jobs.html" | head -1)
E2E_OUT=$tmp/job.html
check "the hostile job's page is 200" test "$(get "$job" "$tmp/job.html")" = 200
check "  strict" strict "$tmp/job.html"
check "  escaped" inert "$tmp/job.html"
run=$(sed -n 's/.*<a href="\(\/runs\/[^"]*\)">.*/\1/p' "$tmp/job.html" | head -1)
E2E_OUT=$tmp/run.html
check "its run's page is 200" test "$(get "$run" "$tmp/run.html")" = 200
check "  strict" strict "$tmp/run.html"
check "  escaped" inert "$tmp/run.html"
E2E_OUT=$tmp/run2.html
check "the demo run's page is 200" \
    test "$(get /runs/application_1700000000000_0042 "$tmp/run2.html")" = 200
check "  its findings with their decisions" grep -q 'class="state state-' "$tmp/run2.html"
rid=${run#/runs/}
E2E_OUT=$tmp/diff.html
check "the diff with the demo run is 200" \
    test "$(get "/diff?a=$rid&b=application_1700000000000_0042" "$tmp/diff.html")" = 200
check "  strict" strict "$tmp/diff.html"
check "  escaped" inert "$tmp/diff.html"
check "  with its chart" grep -q 'data-chart="diff-nodes"\|<h1>optipipe diff</h1>' "$tmp/diff.html"
check "  with the findings: the other job's are new" \
    grep -q '<h2>Findings</h2>' "$tmp/diff.html"
check "  listed by row" grep -q '<tr><th scope="row">new</th><td>\(warning\|error\|info\)</td>' "$tmp/diff.html"
check "a diff of an unknown run is 404" test "$(get "/diff?a=nope&b=$rid" "$tmp/x")" = 404
check "  without the store's path" bash -c "! grep -q history.db '$tmp/x'"
check "a run reference with a control character is 400" \
    test "$(get "/runs/a%1Bb" "$tmp/x")" = 400
check "a job that is not stored is 404" test "$(get "/jobs/nothing-here" "$tmp/x")" = 404
E2E_OUT=$tmp/list.html
check "the analyses page lists it" test "$(get /analyses "$tmp/list.html")" = 200
check "  linked" grep -q "<a href=\"/analyses/$id\">" "$tmp/list.html"
E2E_OUT=$SERVE_ERR
check "the server stops cleanly (no leak under ASan)" serve_stop

finish
