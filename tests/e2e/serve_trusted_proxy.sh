#!/usr/bin/env bash
# Trusted reverse-proxy authentication of optipipe serve (docs/serve.md
# "People: users, roles and a proxy"): --auth-header X-Forwarded-User is
# believed only from a --trusted-proxy address. A loopback client claims
# the header from 127.0.0.2 (trusted: curl --interface) and from 127.0.0.1
# (not trusted: the header ignored, logged, the request needs a token as
# any other). A proxy's user gets the role --users gives the name, else
# --proxy-role (read; none refuses); a bad name is 403; the proxy user's
# decision records the name; the options that go together.
# Usage: serve_trusted_proxy.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1

if ! python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null; then
    echo "SKIP: this sandbox cannot bind 127.0.0.2 (no loopback /8); the trusted proxy was not checked"
    exit 77
fi

"$bin" serve user add alice@example.com --role decide --users users.txt >tok.alice 2>/dev/null
"$bin" serve user add bob --role read --users users.txt >tok.bob 2>/dev/null
legacy=legacy-token-0123456789abcdef
printf '%s\n' "$legacy" >tokens.txt
chmod 600 tokens.txt

"$bin" serve --data "$tmp/d0" --auth-header X-Forwarded-User >/dev/null 2>opt.err
check "--auth-header without --trusted-proxy: exit 2" test $? = 2
E2E_ERR=opt.err
check "the message says they go together" grep -q "go together" opt.err
"$bin" serve --data "$tmp/d0" --auth-header X-Forwarded-User --trusted-proxy 10.0.0.0/33 >/dev/null 2>opt.err
check "a bad CIDR: exit 2" test $? = 2

check "server starts" serve_start "$tmp/data" --users users.txt --token-file tokens.txt \
    --auth-header X-Forwarded-User --trusted-proxy 127.0.0.2
[ -n "$SERVE_URL" ] || { finish; exit 1; }
E2E_ERR=$SERVE_ERR
E2E_OUT=$tmp/body
trusted() { curl -s --interface 127.0.0.2 -o "$tmp/body" -w '%{http_code}' "$@"; }
untrusted() { curl -s --interface 127.0.0.1 -o "$tmp/body" -w '%{http_code}' "$@"; }

code=$(trusted -H 'X-Forwarded-User: alice@example.com' "$SERVE_URL/api/v1/me")
check "trusted: the header names the user (200)" test "$code" = 200
check "trusted: alice with her role from --users, by proxy" python3 - body <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m == {"user": "alice@example.com", "role": "decide", "auth": "proxy",
             "decided_by": "alice@example.com"}, m
PY
code=$(trusted -H 'X-Forwarded-User: stranger' "$SERVE_URL/api/v1/me")
check "trusted: a name --users does not have gets --proxy-role (read)" \
    sh -c "test $code = 200 && grep -q '\"role\": \"read\"' '$tmp/body'"
code=$(trusted -H 'X-Forwarded-User: stranger' -H 'Content-Type: application/json' \
    --data '{"fingerprint": "0123456789abcdef", "status": "approved"}' "$SERVE_URL/api/v1/decisions")
check "trusted: a read proxy user may not decide (403)" test "$code" = 403
code=$(trusted -H 'X-Forwarded-User: al/ice' "$SERVE_URL/api/v1/me")
check "trusted: a name that is no user name is 403" test "$code" = 403

code=$(untrusted -H 'X-Forwarded-User: alice@example.com' "$SERVE_URL/api/v1/me")
check "untrusted: the header is ignored (401 without a token)" test "$code" = 401
check "untrusted: the server logs the ignored header" \
    grep -q "X-Forwarded-User from 127.0.0.1 is not a --trusted-proxy: the header is ignored" "$SERVE_ERR"
code=$(untrusted -H 'X-Forwarded-User: alice@example.com' -H "Authorization: Bearer $(cat tok.bob)" \
    "$SERVE_URL/api/v1/me")
check "untrusted with a token: the token's user, not the header's" \
    sh -c "test $code = 200 && grep -q '\"user\": \"bob\"' '$tmp/body'"
code=$(untrusted -H 'X-Forwarded-User: alice@example.com' "$SERVE_URL/analyses")
check "untrusted page: to the sign-in (303)" test "$code" = 303
code=$(trusted "$SERVE_URL/api/v1/me")
check "trusted without the header: a token is needed (401)" test "$code" = 401

# a proxy user's decision records the name (its POST carries the CSRF token)
code=$(curl -s -o up.json -w '%{http_code}' -H "Authorization: Bearer $legacy" \
    -F "file=@$demo/flink-window-bottleneck.json" "$SERVE_URL/api/v1/analyses")
id=$(json_field up.json id)
done_yet() {
    curl -s -o "$tmp/poll.json" -H "Authorization: Bearer $legacy" "$SERVE_URL/api/v1/analyses/$id"
    case $(json_field "$tmp/poll.json" status) in done | failed) return 0 ;; esac
    return 1
}
check "an analysis to decide on" serve_poll 300 done_yet
fp=$(json_field poll.json report.findings.0.fingerprint)
jar=$tmp/jar
trusted -c "$jar" -H 'X-Forwarded-User: alice@example.com' "$SERVE_URL/analyses/$id" >/dev/null
check "the page says who is signed in" grep -q 'Signed in as <b>alice@example.com</b> (decide)' body
csrf=$(sed -n 's/.*op_csrf\t\([0-9a-f]*\)$/\1/p' "$jar" | head -1)
code=$(trusted -b "$jar" -H 'X-Forwarded-User: alice@example.com' -H 'Content-Type: application/json' \
    --data "{\"fingerprint\": \"$fp\", \"status\": \"approved\"}" "$SERVE_URL/api/v1/decisions")
check "a proxy user's POST without the CSRF token: 403" test "$code" = 403
code=$(trusted -b "$jar" -H 'X-Forwarded-User: alice@example.com' -H "X-CSRF-Token: $csrf" \
    -H 'Content-Type: application/json' \
    --data "{\"fingerprint\": \"$fp\", \"status\": \"approved\", \"comment\": \"via SSO\"}" \
    "$SERVE_URL/api/v1/decisions")
check "alice decides through the proxy (200)" test "$code" = 200
check "decided_by is alice@example.com" test "$(json_field body decided_by)" = alice@example.com
serve_stop

check "server starts with --proxy-role none" serve_start "$tmp/data2" --users users.txt \
    --auth-header X-Forwarded-User --trusted-proxy 127.0.0.0/30 --proxy-role none
code=$(trusted -H 'X-Forwarded-User: stranger' "$SERVE_URL/api/v1/me")
check "--proxy-role none: a name --users does not have is 403" test "$code" = 403
code=$(trusted -H 'X-Forwarded-User: bob' "$SERVE_URL/api/v1/me")
check "--proxy-role none: bob of --users may read (200)" test "$code" = 200
serve_stop
finish
