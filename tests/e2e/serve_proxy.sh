#!/usr/bin/env bash
# docs/serve.md's nginx example, as written there, in front of an
# `optipipe serve` with tokens and --public-origin on 127.0.0.1:0: the block
# is taken from the page, only its ports, certificate paths and Host's port
# are changed for the test (nginx on 127.0.0.1 too, TLS with a certificate
# made here). Through it: /healthz, 401 without a token, an API upload with
# a token analyzed, a browser's sign-in (Secure cookie) and form upload
# (303), a form post from another site and another Host refused. Skipped
# (77) with a notice when nginx or openssl is not installed (not build
# dependencies: scripts/test installs nginx-light when it runs as root).
# Usage: serve_proxy.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

nginx=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)
if [ -z "$nginx" ] || ! command -v openssl >/dev/null; then
    echo "NOTICE: nginx or openssl not installed: docs/serve.md's proxy example was not tried"
    exit 77
fi

printf 'proxy-test-token-0123456789\n' >"$tmp/tokens"
chmod 600 "$tmp/tokens"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pub=https://optipipe.example.com:$port
serve_start "$tmp/data" --token-file "$tmp/tokens" --public-origin "$pub" ||
    { echo "FAIL: the server did not start"; exit 1; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
    -days 1 -subj /CN=optipipe.example.com >/dev/null 2>&1

# The page's block, with this test's ports and files; nginx's own paths in $tmp.
python3 - "$src/docs/serve.md" "$tmp" "$SERVE_PORT" "$port" >"$tmp/nginx.conf" <<'PY'
import sys
doc, tmp, sport, port = sys.argv[1:]
text = open(doc).read()
start = text.index("# /etc/nginx/conf.d/optipipe.conf")
block = text[start:text.index("```", start)]
for a, b in [("127.0.0.1:8080", "127.0.0.1:" + sport),
             ("listen 443 ssl http2;", "listen 127.0.0.1:%s ssl http2;" % port),
             ("listen 80;", "listen 127.0.0.1:0;"),
             # $host drops the port, which this test's public origin has
             ("proxy_set_header Host $host;", "proxy_set_header Host $http_host;"),
             ("/etc/ssl/certs/optipipe.pem", tmp + "/cert.pem"),
             ("/etc/ssl/private/optipipe.key", tmp + "/key.pem")]:
    assert a in block, a
    block = block.replace(a, b)
# the redirect server of port 80 is not tried (it would need a fixed port)
block = block[:block.index("server {\n    listen 127.0.0.1:0;")]
print("""worker_processes 1;
error_log %(t)s/nginx.err;
pid %(t)s/nginx.pid;
events {}
http {
access_log off;
client_body_temp_path %(t)s/nb; proxy_temp_path %(t)s/np;
fastcgi_temp_path %(t)s/nf; uwsgi_temp_path %(t)s/nu; scgi_temp_path %(t)s/ns;
%(b)s
}""" % {"t": tmp, "b": block})
PY
"$nginx" -p "$tmp" -c "$tmp/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx.start" &
ngx=$!
trap 'kill $ngx 2>/dev/null; wait $ngx 2>/dev/null; _serve_cleanup' EXIT
c() { curl -sk --resolve "optipipe.example.com:$port:127.0.0.1" "$@"; }
up() { c -o /dev/null -w '%{http_code}' "$pub/healthz" | grep -q 200; }
check "nginx starts with the page's block" serve_poll 300 up
E2E_ERR=$tmp/nginx.start

code=$(c -o "$tmp/h.json" -w '%{http_code}' "$pub/healthz")
check "through the proxy: /healthz 200" test "$code" = 200
code=$(c -o /dev/null -w '%{http_code}' "$pub/api/v1/jobs")
check "through the proxy: no token, 401" test "$code" = 401
auth="Authorization: Bearer proxy-test-token-0123456789"
code=$(c -o "$tmp/up.json" -w '%{http_code}' -H "$auth" \
    -F "file=@$src/fixtures/demo/flink-window-bottleneck.json" "$pub/api/v1/analyses")
check "through the proxy: an upload with the token, 202" test "$code" = 202
id=$(json_eval "$tmp/up.json" "d['id']" 2>/dev/null)
is_done() {
    c -o "$tmp/a.json" -H "$auth" "$pub/api/v1/analyses/$id" &&
        [ "$(json_eval "$tmp/a.json" "d['status']")" = done ]
}
check "through the proxy: the analysis ends done" serve_poll 1200 is_done
check "... with the flink findings" json_is "$tmp/a.json" \
    "'flink.bottleneck' in [f['rule'] for f in d['report']['findings']]" "True"

# A browser: sign in with the token, then the form upload of the page.
jar=(-c "$tmp/jar" -b "$tmp/jar")
c "${jar[@]}" -o "$tmp/login.html" "$pub/login"
csrf() { sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$1" | head -1; }
code=$(c "${jar[@]}" -o /dev/null -D "$tmp/login.h" -w '%{http_code}' \
    -H "Origin: $pub" -H 'Sec-Fetch-Site: same-origin' \
    --data-urlencode "csrf=$(csrf "$tmp/login.html")" \
    --data-urlencode 'token=proxy-test-token-0123456789' "$pub/login")
check "browser: POST /login through the proxy, 303" test "$code" = 303
check "browser: the session cookie is Secure (X-Forwarded-Proto https)" \
    grep -qi '^set-cookie: op_session=.*; Secure' "$tmp/login.h"
c "${jar[@]}" -o "$tmp/page.html" "$pub/"
form() { # form ORIGIN: the page's upload form posted with that Origin
    c "${jar[@]}" -o /dev/null -D "$tmp/form.h" -w '%{http_code}' -H "Origin: $1" \
        -F "csrf=$(csrf "$tmp/page.html")" \
        -F "file=@$src/fixtures/demo/flink-window-bottleneck.json" "$pub/analyses"
}
code=$(form "$pub")
check "browser: the form upload from the page, 303 to the analysis" test "$code" = 303
check "... Location /analyses/ID" grep -qi '^location: /analyses/[0-9a-f]\{16\}' "$tmp/form.h"
code=$(form https://evil.example)
check "browser: the same form posted from another site, 403" test "$code" = 403
code=$(c -o /dev/null -w '%{http_code}' -H "Host: evil.example:$port" "$pub/healthz")
check "another Host through the proxy: 403" test "$code" = 403

finish
