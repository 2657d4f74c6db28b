#!/usr/bin/env bash
# The pages of optipipe serve say what they are about (issue #28), checked
# on the HTML with curl and python3's html.parser:
#   - /analyses: each analysis' engines, jobs (linked), run statuses and
#     findings by severity, and when;
#   - an analysis of several runs: each finding card names its run, linked;
#   - a failed Flink run's page: why it failed (the last exception and its
#     root cause), the engine by name and version, no epoch-ms time (UTC
#     instead), zero metrics in one line, not a row each;
#   - a Spark and a dbt run's page: the full report's stage timeline and
#     Gantt (the same figures), under the strict CSP (no style attribute);
#   - a job page charts only the metrics that moved and names the others,
#     its axis labels short enough for the chart's margin;
#   - the diff page lists findings new and resolved;
#   - /favicon.ico is an SVG, linked by every page.
# Usage: serve_pages.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
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
E2E_ERR=$SERVE_ERR
demo=fixtures/demo

get() { curl -s -D "$2.h" -o "$2" -w '%{http_code}' "$U$1"; }

# one analysis of several runs: Spark, dbt (a history of 7 days), two Flink
# jobs of the same name, one of them failed
args=(-F file=@$demo/spark-application_1700000000000_0042.zstd
      -F file=@$demo/flink-window-bottleneck.json -F file=@fixtures/flink/job-failed.json)
for f in "$demo"/dbt/*.json; do args+=(-F "file=@$f"); done
curl -s -o "$tmp/up.json" "${args[@]}" "$U/api/v1/analyses"
id=$(json_field "$tmp/up.json" id)
check "the upload is queued" test ${#id} = 16
state() { curl -s "$U/api/v1/analyses/$id" | grep -q "\"status\": *\"$1\""; }
check "the analysis finishes" serve_poll 600 state done

# ---- /analyses ------------------------------------------------------------------
E2E_OUT=$tmp/list.html
check "/analyses is 200" test "$(get /analyses "$tmp/list.html")" = 200
python3 - "$tmp/list.html" "$id" >"$tmp/list.out" 2>&1 <<'PY'
import sys
from html.parser import HTMLParser
class Rows(HTMLParser):
    def __init__(s):
        super().__init__(); s.rows = []; s.cell = None; s.links = []
    def handle_starttag(s, t, a):
        if t == "tr": s.rows.append([])
        if t == "td": s.cell = ""
        if t == "a" and s.rows: s.links.append((len(s.rows) - 1, dict(a).get("href")))
    def handle_endtag(s, t):
        if t == "td": s.rows[-1].append(s.cell.strip()); s.cell = None
    def handle_data(s, d):
        if s.cell is not None: s.cell += d
p = Rows(); p.feed(open(sys.argv[1], encoding="utf-8").read())
row = next(i for i, r in enumerate(p.rows) if r and r[0] == sys.argv[2])
r = p.rows[row]
print(r)
ok = (set(r[3].split(", ")) == {"spark", "dbt", "flink"}
      and all(j in r[4] for j in ("nightly-orders", "shop/build", "orders-per-minute"))
      and "1 failed" in r[5] and "succeeded" in r[5] and r[5].startswith("4 runs")
      and "1 error" in r[6] and "warning" in r[6]
      and r[2].endswith(" UTC")
      and (row, "/jobs/shop%2Fbuild") in p.links)
sys.exit(0 if ok else 1)
PY
E2E_OUT=$tmp/list.out
check "  its row: engines, jobs (linked), run statuses, severities, when" test $? = 0

# ---- finding cards name their run -------------------------------------------------
E2E_OUT=$tmp/a.html
get "/analyses/$id" "$tmp/a.html" >/dev/null
n=$(grep -c '<span class="run">in <a href="/runs/' "$tmp/a.html")
nf=$(grep -c '<article class="finding' "$tmp/a.html")
check "every finding card of the analysis names its run ($n of $nf)" test "$n" -gt 0 -a "$n" = "$nf"
check "  the failed Flink job's among them" \
    grep -q '<code>flink.job-failed</code>.*<span class="run">in <a href="/runs/39b232a873bad3d0d1adc89cdd1d1877">orders-per-minute</a>' "$tmp/a.html"
check "error cards: p.error only in the stylesheet (a card's text is not red)" \
    bash -c "curl -s '$U/static/app.css' | grep -q '^p.error{color:var(--err)' && ! curl -s '$U/static/app.css' | grep -q '^\.error{'"

# ---- a failed Flink run -------------------------------------------------------------
E2E_OUT=$tmp/flink.html
check "the failed Flink run's page is 200" \
    test "$(get /runs/39b232a873bad3d0d1adc89cdd1d1877 "$tmp/flink.html")" = 200
check "  says why it failed" grep -q '<h2>Why it failed</h2>' "$tmp/flink.html"
check "  the last exception and its root cause" \
    grep -A1 '<pre class="failure">org.apache.flink.runtime.JobException: Recovery is suppressed' "$tmp/flink.html" |
    grep -q '^Caused by: java.lang.OutOfMemoryError: Java heap space</pre>'
check "  the engine by name and version" grep -q ' engine flink 1.18.1</p>' "$tmp/flink.html"
check "  no 'engine -'" bash -c "! grep -q 'engine -' '$tmp/flink.html'"
check "  times in UTC (failed_at)" \
    grep -q '<code>failed_at</code></th><td>2024-11-29 08:44:40 UTC</td>' "$tmp/flink.html"
check "  no epoch-ms number anywhere (the evidence's failed_at_ms too)" \
    bash -c "! grep -qE '>1[67][0-9]{11}<' '$tmp/flink.html'"
check "  zero metrics in one line, not rows" \
    bash -c "grep -q '<p class=\"meta zeros\">Run metrics at 0 ([0-9]*): .*<code>checkpoints_failed</code>' '$tmp/flink.html' &&
             ! grep -q '<code>checkpoints_failed</code></th>' '$tmp/flink.html'"
check "  durations and sizes in units" \
    grep -q '<code>checkpoint_state_size_max_bytes</code></th><td>801.8 MiB</td>' "$tmp/flink.html"

# ---- the report's charts on run pages ------------------------------------------------
E2E_OUT=$tmp/spark.html
check "the Spark run's page is 200" \
    test "$(get /runs/application_1700000000000_0042 "$tmp/spark.html")" = 200
check "  has the report's stage timeline" grep -q '<svg data-chart="spark-timeline"' "$tmp/spark.html"
check "  without a style attribute (strict CSP)" bash -c "! grep -q '<svg[^>]* style=' '$tmp/spark.html'"
check "  the engine by name" grep -q ' engine spark 3.5.1</p>' "$tmp/spark.html"
curl -s "$U/analyses/$id/report.html" >"$tmp/report.html"
python3 - "$tmp/spark.html" "$tmp/report.html" >"$tmp/same.out" 2>&1 <<'PY'
import re, sys
def fig(path, chart):
    t = open(path, encoding="utf-8").read()
    m = re.search(r'<svg data-chart="%s".*?</svg>' % chart, t, re.S)
    # the ids count the figures of the page: compare the drawing only
    return re.sub(r'(id|aria-labelledby)="[^"]*"', "", m.group(0)) if m else None
a, b = fig(sys.argv[1], "spark-timeline"), fig(sys.argv[2], "spark-timeline")
print(a is not None, b is not None, a == b)
sys.exit(0 if a and a == b else 1)
PY
E2E_OUT=$tmp/same.out
check "  the same bars as the full report's timeline" test $? = 0
E2E_OUT=$tmp/dbt.html
check "the newest dbt run's page is 200" test "$(get "/runs/shop%2Fbuild@latest" "$tmp/dbt.html")" = 200
check "  has the report's Gantt" grep -q '<svg data-chart="dbt-gantt"' "$tmp/dbt.html"

# ---- a job page charts what moved -------------------------------------------------------
E2E_OUT=$tmp/job.html
check "the dbt job's page is 200" test "$(get "/jobs/shop%2Fbuild" "$tmp/job.html")" = 200
check "  names the steady metrics in one line" \
    grep -q '<p class="meta steady">Not charted, the same in every run ([0-9]*): .*<code>tests_failed</code> 0' "$tmp/job.html"
check "  axis labels fit their margin (bytes_billed's 500G, not 500000000000)" \
    bash -c "grep -q 'text-anchor=\"end\">500G</text>' '$tmp/job.html' &&
             ! grep -qE 'text-anchor=\"end\">[0-9]{7,}</text>' '$tmp/job.html'"
check "  charts none of them" \
    bash -c "! grep -q '<div class=\"fig-title\" aria-hidden=\"true\">tests_failed<' '$tmp/job.html'"

# ---- the diff page's findings ---------------------------------------------------------------
E2E_OUT=$tmp/diff.html
check "the diff of the two Flink runs is 200" \
    test "$(get "/diff?a=orders-per-minute@previous&b=orders-per-minute@latest" "$tmp/diff.html")" = 200
check "  lists findings new and resolved" \
    grep -q '[1-9][0-9]* new, [1-9][0-9]* resolved, [0-9]* changed' "$tmp/diff.html"

# ---- the icon -----------------------------------------------------------------------------------
E2E_OUT=$tmp/icon.h
check "/favicon.ico is 200" test "$(get /favicon.ico "$tmp/icon")" = 200
check "  an SVG" grep -qi '^Content-Type: image/svg+xml' "$tmp/icon.h"
check "  with no script" bash -c "grep -q '^<svg xmlns' '$tmp/icon' && ! grep -qi 'script' '$tmp/icon'"
check "the pages link it" grep -q '<link rel="icon" href="/favicon.ico" type="image/svg+xml">' "$tmp/a.html"

check "server stops cleanly" serve_stop
finish
