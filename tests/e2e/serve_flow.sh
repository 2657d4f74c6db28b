#!/usr/bin/env bash
# Issue 16's whole flow against an `optipipe serve` this test starts on
# 127.0.0.1:0 (docs/serve.md, docs/api.md): upload the demo files in one
# multipart POST, poll until the analysis is done, read its findings (the
# same as `optipipe analyze` of the same files), approve one through
# POST /api/v1/decisions, see it approved in the API and on the analysis
# page, download its patch. Then, on the real artifacts under REAL_DIR
# (skipped with a notice when absent), a .zip of a Databricks rolling log
# folder and a .zip of a dbt target/ (made here, in the scratch folder)
# give the findings `optipipe analyze` gives for the same folder, and the
# jobs API lists their jobs and runs.
# Usage: serve_flow.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=${3:-}
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

# The findings of a JSON report as comparable lines: rule, fingerprint,
# severity, node, message (never a path: the server's inputs are elsewhere).
findings() { # findings FILE EXPR-OF-THE-REPORT
    json_eval "$1" "'\n'.join(sorted('%s %s %s %s %s' % (f['rule'], f['fingerprint'], f['severity'], f.get('node'), f['message']) for f in ($2)['findings']))"
}
# zipdir DIR ZIP: DIR's files into ZIP (deflated), relative names
zipdir() {
    python3 - "$@" <<'PY'
import os, sys, zipfile
d, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(d):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, d))
PY
}
cli() { # the analysis a worker runs, from the command line; JSON to $1
    local out=$1
    shift
    "$bin" analyze --format json --no-config --no-baseline --history "$tmp/cli.db" \
        -o "$out" "$@" 2>/dev/null
}
# upload NAME FILE...: one multipart POST of FILEs; the id to $tmp/NAME.id
upload() {
    local name=$1 code
    shift
    local args=()
    for f in "$@"; do args+=(-F "file=@$f"); done
    code=$(curl -sS -o "$tmp/$name.post" -w '%{http_code}' "${args[@]}" "$url/api/v1/analyses")
    [ "$code" = 202 ] || { echo "  POST: $code $(head -c 300 "$tmp/$name.post")"; return 1; }
    json_eval "$tmp/$name.post" "d['id']" >"$tmp/$name.id"
}
# done_poll NAME: polls GET /api/v1/analyses/ID until its status is done
# or failed (bounded: 300 s, a safety net); the last answer in $tmp/NAME.json
ended() { # ended NAME ID: the answer in $tmp/NAME.json is done or failed
    curl -sS -o "$tmp/$1.json" "$url/api/v1/analyses/$2" &&
        case $(json_eval "$tmp/$1.json" "d['status']") in done | failed) ;; *) return 1 ;; esac
}
done_poll() {
    local st
    serve_poll 3000 ended "$1" "$(cat "$tmp/$1.id")"
    st=$(json_eval "$tmp/$1.json" "d['status']")
    [ "$st" = done ] || { echo "  status: $st $(head -c 400 "$tmp/$1.json")"; return 1; }
}

serve_start "$tmp/data" || { echo "FAIL: the server did not start"; exit 1; }
url=$SERVE_URL

# --- the demo files, any mix, in one upload -----------------------------------------
mkdir -p "$tmp/demo"
find "$src/fixtures/demo" -type f -exec cp {} "$tmp/demo/" \;
check "demo: POST /api/v1/analyses answers 202 with an id" upload demo "$tmp"/demo/*
check "demo: the analysis ends done" done_poll demo
id=$(cat "$tmp/demo.id")
cli "$tmp/demo.cli.json" "$tmp/demo"
findings "$tmp/demo.cli.json" d >"$tmp/demo.want"
findings "$tmp/demo.json" "d['report']" >"$tmp/demo.got"
check "demo: the findings of optipipe analyze of the same files" diff "$tmp/demo.want" "$tmp/demo.got"
check "demo: findings of every engine" json_is "$tmp/demo.json" \
    "sorted({f['source'] for f in d['report']['findings']})" "['dbt', 'flink', 'spark']"

# --- approve one finding: the first with a config change ----------------------------
fp=$(json_eval "$tmp/demo.json" "[f['fingerprint'] for f in d['report']['findings'] if f['changes'] and f['source'] == 'spark'][0]")
key=$(json_eval "$tmp/demo.json" "[f['changes'][0]['key'] for f in d['report']['findings'] if f['fingerprint'] == '$fp'][0]")
decide() {
    local code
    code=$(curl -sS -o "$tmp/decision.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data "{\"fingerprint\": \"$fp\", \"status\": \"approved\", \"comment\": \"flow <test> & co\"}" \
        "$url/api/v1/decisions")
    [ "$code" = 200 ] || { echo "  POST decisions: $code $(head -c 300 "$tmp/decision.json")"; return 1; }
}
check "decision: POST /api/v1/decisions answers 200" decide
check "decision: the answer is the decision" json_is "$tmp/decision.json" \
    "(d['fingerprint'], d['status'])" "('$fp', 'approved')"
curl -sS -o "$tmp/after.json" "$url/api/v1/analyses/$id"
check "decision: the analysis shows the finding approved" json_is "$tmp/after.json" \
    "[(f.get('decision') or {}).get('status') for f in d['report']['findings'] if f['fingerprint'] == '$fp']" "['approved']"
check "decision: with its comment" json_is "$tmp/after.json" \
    "[(f.get('decision') or {}).get('comment') for f in d['report']['findings'] if f['fingerprint'] == '$fp']" "['flow <test> & co']"
curl -sS -o "$tmp/page.html" "$url/analyses/$id"
# the finding's <article data-fingerprint=FP> ... </article> on the page
article() {
    python3 - "$tmp/page.html" "$fp" <<'PY'
import sys
html, fp = open(sys.argv[1]).read(), sys.argv[2]
i = html.find('data-fingerprint="%s"' % fp)
if i >= 0:
    print(html[i:html.find("</article>", i)])
PY
}
curl -sS -o "$tmp/page.html" "$url/analyses/$id"
article >"$tmp/article"
check "page: the analysis page has the finding" test -s "$tmp/article"
check "page: ... marked approved" has "$tmp/article" 'class="state state-approved"'
check "page: ... with the comment, escaped" has "$tmp/article" "flow &lt;test&gt; &amp; co"
check "page: no other finding is approved" test "$(grep -c 'state-approved' "$tmp/page.html")" = 1
code=$(curl -sS -o "$tmp/patch" -D "$tmp/patch.h" -w '%{http_code}' "$url/api/v1/analyses/$id/patches")
check "patch: GET .../patches answers 200" test "$code" = 200
check "patch: it holds the approved change ($key)" has "$tmp/patch" "$key"
code=$(curl -sS -o "$tmp/patch.dl" -D "$tmp/patch.dl.h" -w '%{http_code}' "$url/analyses/$id/patches")
check "patch: the page's download answers 200" test "$code" = 200
check "patch: ... as an attachment" grep -qi '^content-disposition: attachment' "$tmp/patch.dl.h"
check "patch: ... holding the approved change ($key)" has "$tmp/patch.dl" "$key"

# --- real inputs: a Databricks rolling folder and a dbt target/, zipped ---------------
db=$real/spark/platforms/databricks_example_1
dbt=$real/dbt
if [ -d "$db" ] && [ -f "$dbt/run_results.v5.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json" ]; then
    zipdir "$db" "$tmp/databricks.zip"
    mkdir -p "$tmp/target"
    cp "$dbt/run_results.v5.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json" "$tmp/target/run_results.json"
    cp "$dbt/manifest.v11.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json" "$tmp/target/manifest.json"
    zipdir "$tmp/target" "$tmp/target.zip"
    check "real: the Databricks zip is accepted" upload db "$tmp/databricks.zip"
    check "real: the dbt target zip is accepted" upload dbt "$tmp/target.zip"
    check "real: the Databricks analysis ends done" done_poll db
    check "real: the dbt analysis ends done" done_poll dbt
    cli "$tmp/db.cli.json" "$db"
    cli "$tmp/dbt.cli.json" "$tmp/target"
    findings "$tmp/db.cli.json" d >"$tmp/db.want"
    findings "$tmp/db.json" "d['report']" >"$tmp/db.got"
    findings "$tmp/dbt.cli.json" d >"$tmp/dbt.want"
    findings "$tmp/dbt.json" "d['report']" >"$tmp/dbt.got"
    check "real: Databricks findings = optipipe analyze of the folder" diff "$tmp/db.want" "$tmp/db.got"
    check "real: ... and there are some" test -s "$tmp/db.got"
    check "real: dbt findings = optipipe analyze of the folder" diff "$tmp/dbt.want" "$tmp/dbt.got"
    check "real: ... and there are some" test -s "$tmp/dbt.got"
    # The jobs the CLI's store has after the same three analyses, and their runs.
    curl -sS -o "$tmp/jobs.json" "$url/api/v1/jobs"
    "$bin" history jobs --history "$tmp/cli.db" --format json >"$tmp/cli.jobs.json"
    check "jobs: GET /api/v1/jobs lists the jobs of optipipe history jobs" json_is "$tmp/jobs.json" \
        "sorted((j['job'], j['source'], j['runs']) for j in d['jobs'])" \
        "$(json_eval "$tmp/cli.jobs.json" "sorted((j['job'], j['source'], j['runs']) for j in d)")"
    check "jobs: the Databricks job and the dbt job among them" json_is "$tmp/jobs.json" \
        "sorted(j['source'] for j in d['jobs'] if j['job'] == 'databricks job 313' or 'jaffle' in j['job'])" \
        "['dbt', 'spark']"
    json_eval "$tmp/cli.jobs.json" "'\\n'.join(j['job'] for j in d)" >"$tmp/joblist"
    while IFS= read -r job; do
        enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$job")
        curl -sS -o "$tmp/runs.json" "$url/api/v1/jobs/$enc/runs"
        "$bin" history runs "$job" --history "$tmp/cli.db" --format json >"$tmp/cli.runs.json"
        check "jobs: /api/v1/jobs/{job}/runs of '$job' has the runs" json_is "$tmp/runs.json" \
            "[(r['id'], r['status'], r['duration_ms']) for r in d['runs']]" \
            "$(json_eval "$tmp/cli.runs.json" "[(r['id'], r['status'], r['duration_ms']) for r in d['runs']]")"
    done <"$tmp/joblist"
else
    echo "NOTICE: $real (Databricks folder, dbt jaffle_shop_elementary 1.7.0) absent: the real uploads were not checked"
fi

# --- the end: a clean stop, nothing a sanitizer build objected to ---------------------
check "SIGTERM: the server exits 0" serve_stop
no_sanitizer_report() {
    local f bad=0
    for f in "$SERVE_ERR" "$tmp"/data/analyses/*/worker.log; do
        if grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f"; then
            echo "  $f:"
            grep -E -A12 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f" | head -30
            bad=1
        fi
    done
    return $bad
}
check "no sanitizer report from the server or any worker" no_sanitizer_report

finish
