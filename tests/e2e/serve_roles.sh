#!/usr/bin/env bash
# Users and roles of optipipe serve (docs/security.md "Users and roles"):
# `serve user add` prints a token once and stores its hash; with --users
# and a --token-file token together, each role (read, upload, decide,
# admin) and the legacy token are tried against each route class (read:
# pages and GETs; upload: uploads and retries; decide: decisions; admin:
# the users list) through the API and the forms: allowed at or above the
# route's least role, 403 naming both roles below it; decided_by records
# the person's name (and "token" for the legacy token); a named browser
# login's pages say who is signed in.
# Usage: serve_roles.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1

# ---- serve user add ---------------------------------------------------------------
for r in read upload decide admin; do
    "$bin" serve user add "$r-user" --role "$r" --users users.txt >"tok.$r" 2>add.err
    check "serve user add $r-user" test -s "tok.$r"
done
E2E_OUT=users.txt
check "the users file keeps hashes, never a token" \
    sh -c '! grep -q "$(cat tok.read)" users.txt && grep -q "^read-user read sha256:" users.txt'
check "the users file is 0600" test "$(stat -c %a users.txt)" = 600
"$bin" serve user add read-user --role read --users users.txt >/dev/null 2>dup.err
check "a taken name is refused (exit 2)" test $? = 2
legacy=legacy-token-0123456789abcdef
printf '%s\n' "$legacy" >tokens.txt
chmod 600 tokens.txt
cp tok.admin tok.legacy
printf '%s\n' "$legacy" >tok.legacy

check "server starts" serve_start "$tmp/data" --users users.txt --token-file tokens.txt
[ -n "$SERVE_URL" ] || { finish; exit 1; }
E2E_ERR=$SERVE_ERR

as() { # as ROLE curl-args...: the status code
    local r=$1
    shift
    curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$tmp/tok.$r")" "$@"
}

# an analysis to decide on, uploaded by the upload user
code=$(as upload -F "file=@$demo/flink-window-bottleneck.json" "$SERVE_URL/api/v1/analyses")
check "upload-user uploads (202)" test "$code" = 202
id=$(json_field body id)
done_yet() {
    curl -s -o "$tmp/poll.json" -H "Authorization: Bearer $legacy" "$SERVE_URL/api/v1/analyses/$id"
    case $(json_field "$tmp/poll.json" status) in done | failed) return 0 ;; esac
    return 1
}
check "the analysis finishes" serve_poll 300 done_yet
fp=$(json_field poll.json report.findings.0.fingerprint)

# ---- each role against each route class ------------------------------------------------
level() { case $1 in read) echo 1 ;; upload) echo 2 ;; decide) echo 3 ;; admin | legacy) echo 4 ;; esac; }
try() { # try ROLE NEED NAME curl-args...: allowed iff ROLE >= NEED
    local r=$1 need=$2 name=$3 code
    shift 3
    code=$(as "$r" "$@")
    if [ "$(level "$r")" -ge "$(level "$need")" ]; then
        check "$r may $name ($code)" test "$code" != 403 -a "$code" != 401
    else
        check "$r may not $name (403)" test "$code" = 403
        check "$r: the 403 names both roles ($name)" grep -Eq \
            "has the role ('|&#39;|&#x27;)$r('|&#39;|&#x27;).* needs ('|&#39;|&#x27;)$need" "$tmp/body"
    fi
}
for r in read upload decide admin legacy; do
    try "$r" read "GET the analyses (API)" "$SERVE_URL/api/v1/analyses"
    try "$r" read "GET a run (API)" "$SERVE_URL/api/v1/analyses/$id"
    try "$r" read "GET the analyses page" "$SERVE_URL/analyses"
    try "$r" read "GET the jobs page" "$SERVE_URL/jobs"
    try "$r" read "GET /metrics" "$SERVE_URL/metrics"
    try "$r" read "GET /api/v1/me" "$SERVE_URL/api/v1/me"
    try "$r" upload "upload (API)" -F "file=@$demo/flink-window-bottleneck.json" \
        "$SERVE_URL/api/v1/analyses"
    try "$r" upload "upload (form)" -F "file=@$demo/flink-window-bottleneck.json" \
        "$SERVE_URL/analyses"
    try "$r" upload "retry (API)" -X POST "$SERVE_URL/api/v1/analyses/$id/retry"
    try "$r" decide "decide (API)" -H 'Content-Type: application/json' \
        --data "{\"fingerprint\": \"$fp\", \"status\": \"approved\", \"comment\": \"by $r\"}" \
        "$SERVE_URL/api/v1/decisions"
    try "$r" decide "decide (form)" --data "fingerprint=$fp&status=approved" \
        "$SERVE_URL/analyses/$id/decisions"
    try "$r" admin "list the users" "$SERVE_URL/api/v1/users"
done
check "healthz needs no role" test "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_URL/healthz")" = 200

# ---- decided_by is the person ----------------------------------------------------------
code=$(as decide -H 'Content-Type: application/json' \
    --data "{\"fingerprint\": \"$fp\", \"status\": \"dismissed\", \"comment\": \"noise\"}" \
    "$SERVE_URL/api/v1/decisions")
check "decide-user decides (200)" test "$code" = 200
check "decided_by is decide-user" test "$(json_field body decided_by)" = decide-user
as legacy -H 'Content-Type: application/json' \
    --data "{\"fingerprint\": \"$fp\", \"status\": \"approved\"}" "$SERVE_URL/api/v1/decisions" >/dev/null
check "the --token-file token still decides, as 'token'" test "$(json_field body decided_by)" = token
as read "$SERVE_URL/api/v1/me" >/dev/null
check "me: the name and role" python3 - body <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m == {"user": "read-user", "role": "read", "auth": "token", "decided_by": "read-user"}, m
PY
as admin "$SERVE_URL/api/v1/users" >/dev/null
check "users: names and roles, no hash" python3 - body <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))
assert [x["name"] for x in u["users"]] == ["read-user", "upload-user", "decide-user", "admin-user"], u
assert all(set(x) == {"name", "role"} for x in u["users"]), u
PY

# ---- a named browser login -------------------------------------------------------------------
jar=$tmp/jar
curl -s -c "$jar" -o login.html "$SERVE_URL/login"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' login.html | head -1)
code=$(curl -s -b "$jar" -c "$jar" -o /dev/null -w '%{http_code}' \
    --data "csrf=$csrf&token=$(cat tok.decide)" "$SERVE_URL/login")
check "a user's token signs in (303)" test "$code" = 303
curl -s -b "$jar" -o page.html "$SERVE_URL/analyses"
check "the page says who is signed in" grep -q 'Signed in as <b>decide-user</b> (decide)' page.html
code=$(curl -s -b "$jar" -o /dev/null -w '%{http_code}' --data "csrf=$csrf&fingerprint=$fp&status=dismissed&comment=from+a+session" \
    "$SERVE_URL/analyses/$id/decisions")
check "the session decides (303)" test "$code" = 303
as read "$SERVE_URL/api/v1/analyses/$id" >/dev/null
check "the session's decision is decide-user's" python3 - body "$fp" <<'PY'
import json, sys
f = [f for f in json.load(open(sys.argv[1]))["report"]["findings"] if f["fingerprint"] == sys.argv[2]]
assert f[0]["decision"]["decided_by"] == "decide-user", f[0]["decision"]
assert f[0]["decision"]["comment"] == "from a session", f[0]["decision"]
PY
curl -s -c "$jar" -o /dev/null "$SERVE_URL/login"
csrf=$(sed -n 's/.*op_csrf\t\([0-9a-f]*\)$/\1/p' "$jar" | head -1)
code=$(curl -s -b "$jar" -c "$jar" -o /dev/null -w '%{http_code}' \
    --data "csrf=$csrf&token=$(cat tok.read)" "$SERVE_URL/login")
code=$(curl -s -b "$jar" -o body -w '%{http_code}' --data "csrf=$csrf&fingerprint=$fp&status=open" \
    "$SERVE_URL/analyses/$id/decisions")
check "a read user's session may not decide (403)" test "$code" = 403

serve_stop
check "the server stopped cleanly" test $? = 0
finish
