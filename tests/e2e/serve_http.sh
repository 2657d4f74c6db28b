#!/usr/bin/env bash
# optipipe serve's HTTP core (serve/serve.c, serve_http.c, serve_metrics.c):
# start and stop, /healthz (and the store it reports), /metrics (parsed as Prometheus text), routing,
# security headers, the Host check, cross-site POSTs, CSRF, tokens and the
# login session, header and body limits, one server per DATA, a stalled
# client, SIGTERM. Every wait is a bounded poll, nothing depends on timing.
# Usage: serve_http.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

code() { # code ARGS...: the HTTP status of curl ARGS (headers in $tmp/h)
    curl -s -o "$tmp/out" -D "$tmp/h" -w '%{http_code}' "$@"
}
header() { grep -i "^$1:" "$tmp/h" | head -1 | cut -d' ' -f2- | tr -d '\r'; }

# ---- without tokens (loopback) ---------------------------------------------------

check "server starts" serve_start "$tmp/data"
check "DATA is 0700" test "$(stat -c %a "$tmp/data")" = 700
check "DATA/tmp and analyses" test -d "$tmp/data/tmp" -a -d "$tmp/data/analyses"
check "serve.port written" test "$(cat "$tmp/data/serve.port")" = "$SERVE_PORT"
check "one listening line" test "$(grep -c 'listening on' "$SERVE_ERR")" = 1
url=$SERVE_URL

check "healthz 200" test "$(code "$url/healthz")" = 200
check "healthz status" test "$(json_field "$tmp/out" status)" = ok
check "healthz queue" test "$(json_field "$tmp/out" queue)" = 0
check "healthz running" test "$(json_field "$tmp/out" running)" = 0
check "healthz version" test "$(json_field "$tmp/out" version)" != ""
check "healthz store: sqlite" test "$(json_field "$tmp/out" store.backend)" = sqlite
check "...reachable (no history.db yet)" test "$(json_field "$tmp/out" store.reachable)" = true
check "CSP on every answer" has "$tmp/h" "Content-Security-Policy: default-src 'none'; script-src 'self';.*frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
check "nosniff" has "$tmp/h" "X-Content-Type-Options: nosniff"
check "no referrer" has "$tmp/h" "Referrer-Policy: no-referrer"
check "no-store" has "$tmp/h" "Cache-Control: no-store"
check "HEAD healthz 200" test "$(code -I "$url/healthz")" = 200

check "404" test "$(code "$url/nope")" = 404
check "404 under /api is JSON" test "$(code "$url/api/v1/nope")" = 404
check "404 JSON body" test "$(json_field "$tmp/out" error.status)" = 404
check "405" test "$(code -X DELETE "$url/healthz")" = 405
check "405 Allow" test "$(header Allow)" = "GET, HEAD"
check "POST on a GET route 405" test "$(code -X POST "$url/metrics")" = 405

# DNS rebinding: a browser that reached us under another name
check "Host evil 403" test "$(code -H "Host: evil.example:$SERVE_PORT" "$url/healthz")" = 403
check "Host localhost ok" test "$(code -H "Host: localhost:$SERVE_PORT" "$url/healthz")" = 200
check "Host [::1] ok" test "$(code -H "Host: [::1]:$SERVE_PORT" "$url/healthz")" = 200
check "Host other port 403" test "$(code -H "Host: 127.0.0.1:1" "$url/healthz")" = 403

# CSRF: the cookie comes with any page; a form post needs it back
check "login page 200" test "$(code -c "$tmp/jar" "$url/login")" = 200
check "csrf cookie set" has "$tmp/h" "Set-Cookie: op_csrf=[0-9a-f]\{64\}; Path=/; HttpOnly; SameSite=Strict"
csrf=$(awk '$6 == "op_csrf" {print $7}' "$tmp/jar")
check "form post without CSRF 403" test "$(code -d 'token=x' "$url/login")" = 403
case $csrf in *0) wrong=${csrf%?}1 ;; *) wrong=${csrf%?}0 ;; esac
check "form post with a wrong CSRF 403" test "$(code -b "$tmp/jar" -d "csrf=$wrong" "$url/login")" = 403
check "form post with CSRF passes" test "$(code -b "$tmp/jar" -d "csrf=$csrf" "$url/login")" = 303
check "CSRF by header passes" test "$(code -b "$tmp/jar" -H "X-CSRF-Token: $csrf" -X POST "$url/login")" = 303
check "cross-site Origin 403" test "$(code -b "$tmp/jar" -H 'Origin: http://evil.example' -d "csrf=$csrf" "$url/login")" = 403
check "Origin null 403" test "$(code -b "$tmp/jar" -H 'Origin: null' -d "csrf=$csrf" "$url/login")" = 403
check "Origin null from our own page passes" test "$(code -b "$tmp/jar" -H 'Origin: null' -H 'Sec-Fetch-Site: same-origin' -d "csrf=$csrf" "$url/login")" = 303
check "Origin null cross-site 403" test "$(code -b "$tmp/jar" -H 'Origin: null' -H 'Sec-Fetch-Site: cross-site' -d "csrf=$csrf" "$url/login")" = 403
check "Sec-Fetch-Site cross-site 403" test "$(code -b "$tmp/jar" -H 'Sec-Fetch-Site: cross-site' -d "csrf=$csrf" "$url/login")" = 403
check "same Origin passes" test "$(code -b "$tmp/jar" -H "Origin: $url" -d "csrf=$csrf" "$url/login")" = 303

# limits: headers, small bodies (told before reading, and while reading)
python3 -c 'print("x" * 200000, end="")' >"$tmp/200k"
for n in 12000 20000 200000; do
    python3 -c "print('X-Big: ' + 'x' * $n)" >"$tmp/h$n"
done
# up to 16 KiB the handler counts (431); far beyond, libmicrohttpd's own
# memory limit answers 431 before any handler runs
check "12 KB of headers pass" test "$(code -H @"$tmp/h12000" "$url/healthz")" = 200
check "20 KB of headers 431" test "$(code -H @"$tmp/h20000" "$url/healthz")" = 431
check "431 names the limit" has "$tmp/out" "more than 16384 bytes"
check "200 KB of headers 431" test "$(code -H @"$tmp/h200000" "$url/healthz")" = 431
check "body over 64 KiB 413" test "$(code -b "$tmp/jar" --data-binary @"$tmp/200k" "$url/login")" = 413
check "chunked body over 64 KiB 413" test "$(code -b "$tmp/jar" -H 'Transfer-Encoding: chunked' --data-binary @"$tmp/200k" "$url/login")" = 413

# a client that sends half its headers and stalls is closed (--conn-timeout 1
# on a second server: the wait is bounded by 30 s, nothing is timed)
check "second server on one DATA refused" sh -c \
    "'$bin' serve --listen 127.0.0.1:0 --data '$tmp/data' 2>'$tmp/err2'; test \$? = 2"
check "it says why" has "$tmp/err2" "another optipipe serve uses"

# /metrics parsed as the text exposition format
check "metrics 200" test "$(code "$url/metrics")" = 200
check "metrics content type" has "$tmp/h" "Content-Type: text/plain; version=0.0.4"
cp "$tmp/out" "$tmp/metrics"
python3 - "$tmp/metrics" >"$tmp/mcheck" 2>&1 <<'EOF'
import re, sys
types, samples = {}, {}
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (-?[0-9.e+]+|\+Inf|NaN)$')
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# TYPE "):
        _, _, name, t = line.split(" ", 3)
        assert name not in types, "TYPE twice: " + name
        types[name] = t
        continue
    if line.startswith("# HELP ") or not line:
        continue
    m = line_re.match(line)
    assert m, "not a sample line: " + line
    name, labels, value = m.group(1), m.group(3) or "", float(m.group(4))
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    assert name in types or base in types, "no TYPE for " + name
    for kv in filter(None, labels.split(",")):
        assert re.fullmatch(r'[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"', kv), kv
    samples[(name, labels)] = value
want = ["optipipe_http_requests_total", "optipipe_uploads_total",
        "optipipe_upload_bytes_total", "optipipe_queue_length",
        "optipipe_analyses_running", "optipipe_analysis_duration_seconds_count",
        "optipipe_analysis_duration_seconds_sum"]
for w in want:
    assert any(n == w for n, _ in samples), "missing " + w
for reason in ["queue_full", "too_large", "unauthorized", "csrf", "bad_request"]:
    assert ("optipipe_rejections_total", 'reason="%s"' % reason) in samples, reason
for state in ["done", "failed"]:
    assert ("optipipe_analyses_total", 'state="%s"' % state) in samples, state
assert types["optipipe_analysis_duration_seconds"] == "histogram"
buckets = [(l, v) for (n, l), v in samples.items()
           if n == "optipipe_analysis_duration_seconds_bucket"]
vals = [v for _, v in buckets]
assert vals == sorted(vals), "buckets not cumulative"
assert buckets[-1][0] == 'le="+Inf"'
assert buckets[-1][1] == samples[("optipipe_analysis_duration_seconds_count", "")]
assert samples[("optipipe_rejections_total", 'reason="csrf"')] >= 6
assert samples[("optipipe_rejections_total", 'reason="too_large"')] >= 2
assert samples[("optipipe_http_requests_total", "")] >= 10
assert any(n == "optipipe_build_info" for n, _ in samples)
print("ok")
EOF
E2E_OUT=$tmp/mcheck check "metrics parse and count" has "$tmp/mcheck" '^ok$'
E2E_OUT=$tmp/out

# a client that goes away mid-upload leaves nothing in DATA/tmp
python3 - "$SERVE_PORT" "$tmp/data/tmp" >"$tmp/cut" <<'EOF'
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
body = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.json\"\r\n"
        b"Content-Type: application/json\r\n\r\n" + b"{" * 50000)
s.sendall(b"POST /api/v1/analyses HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % int(sys.argv[1]) +
          b"Content-Type: multipart/form-data; boundary=B\r\n"
          b"Content-Length: 1000000\r\n\r\n" + body)
end = time.monotonic() + float(os.environ.get("OP_TEST_WAIT_S", 120))  # a safety net
while time.monotonic() < end:  # until the server staged something
    if os.listdir(sys.argv[2]):
        print("staged")
        break
    time.sleep(0.05)
s.close()
EOF
E2E_OUT=$tmp/cut check "the upload was being staged" has "$tmp/cut" '^staged$'
E2E_OUT=$tmp/out
tmp_empty() { [ -z "$(ls -A "$tmp/data/tmp")" ]; }
check "a cut upload is removed" serve_poll 300 tmp_empty
check "no analysis from it" test -z "$(ls -A "$tmp/data/analyses")"

# a history.db that is no run store: /healthz 503 (the reason in the log),
# 200 again once it is gone (each probe at most every 2 s: waited for)
echo "not a run store" >"$tmp/data/history.db"
hz_is() { [ "$(code "$url/healthz")" = "$1" ]; }
check "an unreadable store: /healthz 503" serve_poll 600 hz_is 503
check "...status says so" test "$(json_field "$tmp/out" status)" = "store unreachable"
check "...the log names the file" has "$SERVE_ERR" "run store is unreachable: .*history.db"
rm -f "$tmp/data/history.db"
check "...gone again: 200" serve_poll 600 hz_is 200
# an empty history.db is one the first recording is making (the window
# between its file and its committed schema): reachable, not 503
echo "not a run store" >"$tmp/data/history.db"
check "...unreadable again: 503" serve_poll 600 hz_is 503
: >"$tmp/data/history.db"
check "an empty store (being made): 200" serve_poll 600 hz_is 200
rm -f "$tmp/data/history.db"

check "SIGTERM stops it with 0" serve_stop
check "stop said" has "$SERVE_ERR" "serve: stopping"

# ---- a stalled client --------------------------------------------------------------

check "server with --conn-timeout 1" serve_start "$tmp/data" --conn-timeout 1
python3 - "$SERVE_PORT" >"$tmp/stall" 2>&1 <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
s.settimeout(120)  # a safety net, not a measurement: the server closes long before
try:
    print("closed" if s.recv(1000) == b"" else "answered")
except socket.timeout:
    print("still open after 120 s")
EOF
E2E_OUT=$tmp/stall check "a stalled client is closed" has "$tmp/stall" '^closed$'
E2E_OUT=$tmp/out
check "server still answers" test "$(code "$SERVE_URL/healthz")" = 200
check "SIGTERM again 0" serve_stop

# more threads than connections, stopped at once: every MHD thread wakes
check "server with --threads 8 --max-connections 4" serve_start "$tmp/data" --threads 8 --max-connections 4
check "it stops on SIGTERM with 0" serve_stop

# ---- not loopback ------------------------------------------------------------------

"$bin" serve --listen 0.0.0.0:0 --data "$tmp/d2" 2>"$tmp/err"
check "non-loopback without tokens exits 2" test $? = 2
check "it names the address" has "$tmp/err" "0.0.0.0:0 is not a loopback address"
check "and what to do" has "$tmp/err" "token-file"
check "nothing was made" test ! -e "$tmp/d2"
"$bin" serve --listen localhost:0 --data "$tmp/d2" 2>"$tmp/err"
check "a host name is refused" test $? = 2
"$bin" serve --data 2>"$tmp/err"
check "--data without a value is a usage error" test $? = 2
"$bin" serve 2>"$tmp/err"
check "--data missing" has "$tmp/err" "needs --data"

# ---- with tokens -------------------------------------------------------------------

token=0123456789abcdef-ci-token
printf '# the CI token\n\n%s\n' "$token" >"$tmp/tokens"
chmod 644 "$tmp/tokens"
"$bin" serve --data "$tmp/data" --token-file "$tmp/tokens" 2>"$tmp/err"
check "a readable token file is refused" test $? = 2
check "it says chmod 600" has "$tmp/err" "chmod 600"
chmod 600 "$tmp/tokens"
printf 'short\n' >"$tmp/short"
chmod 600 "$tmp/short"
"$bin" serve --data "$tmp/data" --token-file "$tmp/short" 2>"$tmp/err"
check "a short token is refused" test $? = 2
check "it names the line" has "$tmp/err" "short:1: a token has 16"

check "server with tokens" serve_start "$tmp/data" --token-file "$tmp/tokens"
url=$SERVE_URL
check "healthz is public" test "$(code "$url/healthz")" = 200
check "metrics without token 401" test "$(code "$url/metrics")" = 401
check "401 says Bearer" has "$tmp/h" "WWW-Authenticate: Bearer"
check "401 is JSON" test "$(json_field "$tmp/out" error.status)" = 401
check "wrong token 401" test "$(code -H "Authorization: Bearer ${token}x" "$url/metrics")" = 401
check "prefix of the token 401" test "$(code -H "Authorization: Bearer ${token%?}" "$url/metrics")" = 401
check "right token 200" test "$(code -H "Authorization: Bearer $token" "$url/metrics")" = 200
check "Bearer is case-insensitive" test "$(code -H "Authorization: bearer $token" "$url/metrics")" = 200
check "a token needs no CSRF" test "$(code -H "Authorization: Bearer $token" -X POST "$url/logout")" = 303

# the browser: login page, session cookie, logout
rm -f "$tmp/jar"
check "login page" test "$(code -c "$tmp/jar" "$url/login")" = 200
check "login form" has "$tmp/out" 'name="token"'
check "login form carries csrf" has "$tmp/out" 'name="csrf" value="[0-9a-f]\{64\}"'
csrf=$(awk '$6 == "op_csrf" {print $7}' "$tmp/jar")
check "wrong token login 401" test "$(code -b "$tmp/jar" -d "csrf=$csrf&token=nope" "$url/login")" = 401
check "login 303" test "$(code -b "$tmp/jar" -c "$tmp/jar" --data-urlencode "csrf=$csrf" --data-urlencode "token=$token" "$url/login")" = 303
check "session cookie" has "$tmp/h" "Set-Cookie: op_session=[0-9a-f]\{64\}; Path=/; HttpOnly; SameSite=Strict"
check "Secure behind an https proxy" sh -c "curl -s -D - -o /dev/null -H 'X-Forwarded-Proto: https' '$url/login' | grep -q 'SameSite=Strict; Secure'"
check "session opens metrics" test "$(code -b "$tmp/jar" "$url/metrics")" = 200
check "session POST needs CSRF" test "$(code -b "$tmp/jar" -X POST "$url/logout")" = 403
check "a forged session 401" test "$(code -b "op_session=$(printf '%064d' 0)" "$url/metrics")" = 401
check "logout 303" test "$(code -b "$tmp/jar" -c "$tmp/jar" -d "csrf=$csrf" "$url/logout")" = 303
check "logout goes to login" test "$(header Location)" = /login
check "session gone" test "$(code -b "$tmp/jar" "$url/metrics")" = 401
check "a page without session goes to login" test "$(code "$url/")" = 303
check "to /login" test "$(header Location)" = /login
check "a deeper page comes back after" test "$(code "$url/jobs/a%2Fb")" = 303
check "next= keeps the path as sent" test "$(header Location)" = "/login?next=/jobs/a%252Fb"
check "the form carries next" test "$(code "$url$(header Location)")" = 200
check "next in a hidden field" has "$tmp/out" 'name="next" value="/jobs/a%2Fb"'
check "login goes back to next" test "$(code -b "$tmp/jar" --data-urlencode "csrf=$csrf" --data-urlencode "token=$token" --data-urlencode "next=/jobs/a%2Fb" "$url/login")" = 303
check "Location is next" test "$(header Location)" = "/jobs/a%2Fb"
check "no open redirect" test "$(code -b "$tmp/jar" --data-urlencode "csrf=$csrf" --data-urlencode "token=$token" --data-urlencode "next=//evil.example/x" "$url/login")" = 303
check "Location stays here" test "$(header Location)" = /
check "SIGTERM with tokens 0" serve_stop

# ---- behind a proxy: --public-origin -----------------------------------------------

"$bin" serve --data "$tmp/data" --public-origin 'https://op.example.com/x' 2>"$tmp/err"
check "a public origin with a path is refused" test $? = 2
check "server with --public-origin" serve_start "$tmp/data" --public-origin https://op.example.com
url=$SERVE_URL
check "its Host passes" test "$(code -H 'Host: op.example.com' "$url/healthz")" = 200
check "another Host still 403" test "$(code -H 'Host: evil.example' "$url/healthz")" = 403
check "login page for the jar" test "$(code -c "$tmp/jar" "$url/login")" = 200
csrf=$(awk '$6 == "op_csrf" {print $7}' "$tmp/jar")
# (curl matches cookies against a Host header given: the cookie goes by hand)
check "its Origin passes" test "$(code -H "Cookie: op_csrf=$csrf" -H 'Host: op.example.com' -H 'Origin: https://op.example.com' -d "csrf=$csrf" "$url/login")" = 303
check "its Origin with the proxy's Host passes" test "$(code -b "$tmp/jar" -H 'Origin: https://op.example.com' -d "csrf=$csrf" "$url/login")" = 303
check "another Origin still 403" test "$(code -b "$tmp/jar" -H 'Origin: https://evil.example' -d "csrf=$csrf" "$url/login")" = 403
check "SIGTERM with --public-origin 0" serve_stop

# ---- IPv6 loopback, when the machine has it ------------------------------------------

if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
    "$bin" serve --listen '[::1]:0' --data "$tmp/d6" 2>"$tmp/err6" &
    pid6=$!
    serve_poll 300 grep -q 'listening on http://\[::1\]:' "$tmp/err6"
    check "IPv6 listening line" has "$tmp/err6" 'listening on http://\[::1\]:[0-9]'
    p6=$(cat "$tmp/d6/serve.port" 2>/dev/null)
    check "IPv6 healthz" test "$(code -g "http://[::1]:$p6/healthz")" = 200
    kill "$pid6"
    wait "$pid6"
    check "IPv6 server exits 0" test $? = 0
else
    echo "note: no IPv6 loopback here; the [::1] case is skipped"
fi

finish
