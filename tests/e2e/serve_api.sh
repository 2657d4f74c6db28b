#!/usr/bin/env bash
# optipipe serve's REST API (serve/serve_api.c, docs/api.md) with curl on a
# loopback ephemeral port: upload the demo files, poll, read the findings,
# approve one and see it in the analysis and the job's runs, a second
# upload of the same files shows it decided, the patches of the approved
# change equal `analyze --emit-changes`, JSON errors (404, 400, 403 for
# rules and URL hosts, 429 with Retry-After on a full queue made full
# deterministically by a URL input whose server holds its answer).
# Usage: serve_api.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1

get() { serve_get "$@"; }
post_json() { serve_post_json "$@"; }
is_error() { # is_error FILE STATUS: {"error": {"status": STATUS, "message": "..."}}
    python3 - "$1" "$2" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["status"] == int(sys.argv[2]) and isinstance(e["message"], str) and e["message"]
assert set(e) == {"status", "message"}
EOF
}
done_or_failed() {
    get "/api/v1/analyses/$1" "$tmp/poll.json" >/dev/null
    case $(json_field "$tmp/poll.json" status) in done | failed) return 0 ;; esac
    return 1
}

check "server starts" serve_start "$tmp/data"

# ---- upload, poll, read ------------------------------------------------------------
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@$demo/flink-window-bottleneck.json" \
    -F "file=@$demo/spark-application_1700000000000_0042.zstd" "$SERVE_URL/api/v1/analyses")
check "upload: 202" test "$code" = 202
check "upload: queued" test "$(json_field up.json status)" = queued
id=$(json_field up.json id)
check "upload: an id" grep -Eq '^[0-9a-f]{16}$' <<<"$id"
check "upload: links.self" test "$(json_field up.json links.self)" = "/api/v1/analyses/$id"
check "analysis finishes" serve_poll 300 done_or_failed "$id"
get "/api/v1/analyses/$id" a1.json >/dev/null
check "analysis done" test "$(json_field a1.json status)" = done
check "report: schema 1" test "$(json_field a1.json report.schema)" = 1
check "report: inputs relative to the analysis" \
    test "$(json_field a1.json report.inputs.0.path)" = inputs/flink-window-bottleneck.json
# the finding to approve: flink.bottleneck (it has changes)
fp=$(python3 -c '
import json, sys
r = json.load(open("a1.json"))["report"]
print([f["fingerprint"] for f in r["findings"] if f["rule"] == "flink.bottleneck" and f["changes"]][0])')
check "a finding with changes" grep -Eq '^[0-9a-f]{16}$' <<<"$fp"
check "undecided at first" python3 -c '
import json, sys
r = json.load(open("a1.json"))["report"]
assert all(f["decision"] is None for f in r["findings"])'

# ---- decide ---------------------------------------------------------------------------
code=$(post_json /api/v1/decisions "{\"fingerprint\": \"$fp\", \"status\": \"approved\", \"comment\": \"go <b>\"}" d.json)
check "decision: 200" test "$code" = 200
check "decision: approved" test "$(json_field d.json status)" = approved
check "decision: comment kept" test "$(json_field d.json comment)" = "go <b>"
check "decision: escaped in JSON" grep -q 'go \\u003cb\\u003e' d.json
check "decision: rule and job" test "$(json_field d.json rule)/$(json_field d.json job)" = \
    flink.bottleneck/orders-per-minute
get "/api/v1/analyses/$id" a1.json >/dev/null
check "approved in the analysis" python3 - "$fp" <<'EOF'
import json, sys
r = json.load(open("a1.json"))["report"]
d = [f["decision"] for f in r["findings"] if f["fingerprint"] == sys.argv[1]][0]
assert d["status"] == "approved" and d["comment"] == "go <b>" and d["decided_by"] == "local", d
EOF
check "job runs: 200" test "$(get /api/v1/jobs/orders-per-minute/runs runs.json)" = 200
check "approved in the job's runs" python3 - "$fp" <<'EOF'
import json, sys
runs = json.load(open("runs.json"))["runs"]
d = [f["decision"] for f in runs[0]["findings"] if f["fingerprint"] == sys.argv[1]][0]
assert d["status"] == "approved", d
EOF
run=$(json_field runs.json runs.0.id)
check "run: 200" test "$(get "/api/v1/runs/$run" run.json)" = 200
check "run: nodes and config" python3 -c '
import json
r = json.load(open("run.json"))
assert r["nodes"] and isinstance(r["config"], dict) and r["findings"][0]["changes"] is not None'
check "jobs: both" test "$(get /api/v1/jobs jobs.json)" = 200
check "jobs: the flink one" has jobs.json '"orders-per-minute"'
check "jobs page: limit 1 has next" test "$(get '/api/v1/jobs?limit=1' jp.json; json_field jp.json next)" != null
check "decisions metric" sh -c "curl -s '$SERVE_URL/metrics' | grep -q '^optipipe_decisions_total 1$'"

# ---- patches ---------------------------------------------------------------------------
check "patches: 200" test "$(get "/api/v1/analyses/$id/patches" p.json)" = 200
check "patches: one file" python3 -c '
import json
p = json.load(open("p.json"))
assert [x["file"] for x in p["patches"]] == ["flink-orders-per-minute.yaml"] and p["refused"] == 0, p'
python3 -c 'import json; open("api.yaml", "w").write(json.load(open("p.json"))["patches"][0]["text"])'
"$bin" baseline update -q --fingerprint "$fp" --status approved -o bl.json \
    "$demo/flink-window-bottleneck.json" "$demo/spark-application_1700000000000_0042.zstd" 2>err
"$bin" analyze -q --no-config --baseline bl.json --emit-changes cli-patches \
    "$demo/flink-window-bottleneck.json" "$demo/spark-application_1700000000000_0042.zstd" >/dev/null 2>err
check "patches: the same as --emit-changes" cmp api.yaml cli-patches/flink-orders-per-minute.yaml
curl -s -D hdr -o p.txt "$SERVE_URL/api/v1/analyses/$id/patches?format=text"
check "patches text: an attachment" grep -qi "^content-disposition: attachment; filename=\"optipipe-patches-$id.txt\"" hdr
check "patches text: text/plain" grep -qi '^content-type: text/plain' hdr
check "patches text: the file" has p.txt "flink.bottleneck \[$fp\]"
curl -s -H 'Accept: text/plain' -o p2.txt "$SERVE_URL/api/v1/analyses/$id/patches"
check "patches text by Accept" cmp p.txt p2.txt

# ---- the same inputs again: decided --------------------------------------------------------
curl -s -o up2.json -F "file=@$demo/flink-window-bottleneck.json" \
    -F "file=@$demo/spark-application_1700000000000_0042.zstd" "$SERVE_URL/api/v1/analyses"
id2=$(json_field up2.json id)
check "second analysis finishes" serve_poll 300 done_or_failed "$id2"
get "/api/v1/analyses/$id2" a2.json >/dev/null
check "second upload: the finding decided" python3 - "$fp" <<'EOF'
import json, sys
r = json.load(open("a2.json"))["report"]
f = [f for f in r["findings"] if f["fingerprint"] == sys.argv[1]][0]
assert f.get("suppressed") is True and f["decision"]["status"] == "approved", f
assert r["applied"]["suppressed_by_baseline"] == 1, r["applied"]
EOF
check "list: both analyses" python3 - "$id" "$id2" <<EOF
import json, subprocess
a = json.loads(subprocess.check_output(["curl", "-s", "$SERVE_URL/api/v1/analyses"]))
assert [x["id"] for x in a["analyses"]] == ["$id2", "$id"], a
p = json.loads(subprocess.check_output(["curl", "-s", "$SERVE_URL/api/v1/analyses?limit=1"]))
assert [x["id"] for x in p["analyses"]] == ["$id2"] and p["next"] == "$id2", p
q = json.loads(subprocess.check_output(["curl", "-s", "$SERVE_URL/api/v1/analyses?limit=1&before=$id2"]))
assert [x["id"] for x in q["analyses"]] == ["$id"] and q["next"] is None, q
EOF

# ---- undo -------------------------------------------------------------------------------------
code=$(post_json /api/v1/decisions "{\"fingerprint\": \"$fp\", \"status\": \"open\"}" d.json)
check "reopen: 200" test "$code/$(json_field d.json status)" = 200/open
get "/api/v1/analyses/$id" a1.json >/dev/null
check "reopened: no decision" python3 - "$fp" <<'EOF'
import json, sys
r = json.load(open("a1.json"))["report"]
assert [f["decision"] for f in r["findings"] if f["fingerprint"] == sys.argv[1]] == [None]
EOF
check "reopened: no patch" python3 -c "
import json, subprocess
p = json.loads(subprocess.check_output(['curl', '-s', '$SERVE_URL/api/v1/analyses/$id/patches']))
assert p['patches'] == [], p"

# ---- a raw body; a job key with '/' (dbt: shop/build) -------------------------------------
code=$(curl -s -o raw.json -w '%{http_code}' --data-binary "@$demo/flink-window-bottleneck.json" \
    -H 'Content-Type: application/octet-stream' "$SERVE_URL/api/v1/analyses?name=flink.json")
check "raw body: 202" test "$code" = 202
check "raw body: analysis done" serve_poll 300 done_or_failed "$(json_field raw.json id)"
check "raw body: the file as named" test "$(json_field poll.json report.inputs.0.path)" = inputs/flink.json
dbt_args=()
for f in "$demo"/dbt/*.json; do dbt_args+=(-F "file=@$f"); done
curl -s -o dbt.json "${dbt_args[@]}" "$SERVE_URL/api/v1/analyses"
check "dbt: analysis done" serve_poll 300 done_or_failed "$(json_field dbt.json id)"
get /api/v1/jobs jobs.json >/dev/null
check "jobs: the dbt key's link %2F-encoded" has jobs.json '"/api/v1/jobs/shop%2Fbuild/runs"'
check "dbt job runs by %2F: 200" test "$(get /api/v1/jobs/shop%2Fbuild/runs dr.json)" = 200
check "dbt job runs: the key decoded" test "$(json_field dr.json job)" = shop/build
check "dbt job runs: 7 nights, newest first" python3 -c '
import json
r = json.load(open("dr.json"))["runs"]
assert len(r) == 7 and r[0]["started_at"] > r[-1]["started_at"], [x["started_at"] for x in r]'
check "dbt runs page: limit 2 then before" python3 - "$SERVE_URL" <<'EOF2'
import json, sys, urllib.request
base = sys.argv[1] + "/api/v1/jobs/shop%2Fbuild/runs"
p1 = json.load(urllib.request.urlopen(base + "?limit=2"))
p2 = json.load(urllib.request.urlopen(base + "?limit=2&before=" + p1["next"]))
ids = [r["id"] for r in p1["runs"] + p2["runs"]]
assert len(p1["runs"]) == 2 and len(p2["runs"]) == 2 and len(set(ids)) == 4, (p1["next"], ids)
EOF2

# ---- errors -------------------------------------------------------------------------------------
check "unknown id: 404" test "$(get /api/v1/analyses/0123456789abcdef e.json)" = 404
check "unknown id: JSON error" is_error e.json 404
check "malformed id: 400" test "$(get /api/v1/analyses/xyz e.json)" = 400
check "malformed id: JSON error" is_error e.json 400
check "patches of a malformed id: 400" test "$(get /api/v1/analyses/..%2F..%2Fx/patches e.json)" = 400
check "unknown job: 404" test "$(get /api/v1/jobs/no-such-job/runs e.json)" = 404
check "unknown run: 404" test "$(get /api/v1/runs/no-such-run e.json)" = 404
check "bad limit: 400" test "$(get '/api/v1/analyses?limit=100000' e.json)" = 400
check "bad limit: JSON error" is_error e.json 400
check "decision on no finding: 404" test "$(post_json /api/v1/decisions \
    '{"fingerprint": "0123456789abcdef", "status": "approved"}' e.json)" = 404
check "decision, bad status: 400" test "$(post_json /api/v1/decisions \
    "{\"fingerprint\": \"$fp\", \"status\": \"maybe\"}" e.json)" = 400
check "decision as text/plain (a form of another site): 415" test "$(curl -s -o e.json \
    -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary \
    "{\"fingerprint\": \"$fp\", \"status\": \"dismissed\"}" "$SERVE_URL/api/v1/decisions")" = 415
check "decision, not JSON: 400" test "$(post_json /api/v1/decisions 'nope' e.json)" = 400
check "decision, not JSON: JSON error" is_error e.json 400
printf 'return {}\n' >r.lua
code=$(curl -s -o e.json -w '%{http_code}' -F "file=@$demo/flink-window-bottleneck.json" \
    -F "rules=@r.lua" "$SERVE_URL/api/v1/analyses")
check "rules upload without --allow-rule-upload: 403" test "$code" = 403
check "rules upload: JSON error" is_error e.json 403
code=$(curl -s -o e.json -w '%{http_code}' -F "url=http://127.0.0.1:9/x" "$SERVE_URL/api/v1/analyses")
check "URL without --fetch-allow: 403" test "$code" = 403
check "URL 403 names the host" has e.json "127.0.0.1"
code=$(post_json /api/v1/analyses '{"urls": ["http://203.0.113.9/jobs"]}' e.json)
check "JSON URLs: host not allowed: 403" test "$code" = 403
check "JSON URLs 403 names the host" has e.json "203.0.113.9"
many=$(python3 -c 'import json; print(json.dumps({"urls": ["http://127.0.0.1:9/%d" % i for i in range(65)]}))')
code=$(post_json /api/v1/analyses "$many" e.json)
check "65 URL inputs: 400" test "$code" = 400
check "65 URL inputs: said" has e.json "more than 64 URL inputs"
code=$(curl -s -o e.json -w '%{http_code}' -F "note=nothing" "$SERVE_URL/api/v1/analyses")
check "upload of nothing: 400" test "$code" = 400
check "upload of nothing: JSON error" is_error e.json 400
check "server stops" serve_stop

# ---- 429: one worker busy on a URL whose server holds its answer, one queued ---------------
mkdir -p hold
check "holding server up" hold_start "$tmp/hold"
hurl="$HOLD_URL/jobs/overview"
check "server with one worker, queue 1" serve_start "$tmp/data2" --fetch-allow 127.0.0.1 \
    --workers 1 --queue 1
code=$(post_json /api/v1/analyses "{\"urls\": [\"$hurl\"]}" q1.json)
check "first: 202" test "$code" = 202
check "first: the worker is fetching" serve_poll 300 test -s hold/asked
code=$(post_json /api/v1/analyses "{\"urls\": [\"$hurl\"]}" q2.json)
check "second: 202 (queued)" test "$code" = 202
code=$(curl -s -D h429 -o e.json -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "{\"urls\": [\"$hurl\"]}" "$SERVE_URL/api/v1/analyses")
check "third: 429" test "$code" = 429
check "429: Retry-After" grep -Eqi '^retry-after: [0-9]+' h429
check "429: JSON error" is_error e.json 429
check "running analysis: patches 409" test "$(get "/api/v1/analyses/$(json_field q1.json id)/patches" e.json)" = 409
check "running analysis: JSON error" is_error e.json 409
get "/api/v1/analyses/$(json_field q2.json id)" q2s.json >/dev/null
check "queued analysis: status and position" test \
    "$(json_field q2s.json status)/$(json_field q2s.json queue_position)/$(json_field q2s.json report)" = queued/0/null
touch hold/release
check "held analysis ends" serve_poll 300 done_or_failed "$(json_field q1.json id)"
check "queued analysis ends" serve_poll 300 done_or_failed "$(json_field q2.json id)"
check "server stops (2)" serve_stop
finish
