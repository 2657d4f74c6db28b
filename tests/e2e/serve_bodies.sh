#!/usr/bin/env bash
# optipipe serve and request bodies it does not expect (issue #24): a GET
# or HEAD with a body on every kind of route (public, page, API, static,
# unknown) is answered and the server lives on (it crashed on a NULL upload
# stage); a body over 64 KiB there is a 413; an upload over
# --max-upload-bytes from a client without "Expect: 100-continue" (python
# urllib) reads the 413, not a reset (the server drains the body first);
# a bad ?before cursor is 400; a decision against a newer-schema store is
# a 5xx (the server's problem, not the client's); DATA/serve.port is 0600.
# Usage: serve_bodies.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

data=$tmp/data
mkdir -p "$data"
chmod 700 "$data"
# a run store whose schema is newer than this optipipe reads
"$bin" analyze --no-config --no-baseline --history "$data/history.db" \
    "$src/fixtures/demo/flink-window-bottleneck.json" >"$tmp/an.out" 2>"$tmp/an.err"
check "the store was recorded" test -s "$data/history.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("pragma user_version = 99"); c.commit()' \
    "$data/history.db"
check "server starts" serve_start "$data" --max-upload-bytes 100000
check "DATA/serve.port is 0600" test "$(stat -c %a "$data/serve.port")" = 600
E2E_OUT=$tmp/out
E2E_ERR=$SERVE_ERR

# the server answers /healthz (503: the planted store is unreadable to it)
alive() { kill -0 "$SERVE_PID" 2>/dev/null &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_URL/healthz")" = 503 ]; }
code() { curl -s -o "$tmp/out" -w '%{http_code}' "$@"; }
check "/healthz with a store of a newer schema: 503" test "$(code "$SERVE_URL/healthz")" = 503
check "...the log says why" has "$SERVE_ERR" "run store is unreachable: .*schema 99 is newer"

# ---- GET with a body, on every kind of route -------------------------------------
routes="/healthz /metrics /login /static/app.js /static/app.css / /analyses
/analyses/0123456789abcdef /jobs /jobs/x /runs/x /diff /api/v1/analyses
/api/v1/analyses/0123456789abcdef /api/v1/jobs /api/v1/jobs/x/runs /api/v1/runs/x
/nope /api/v1/nope"
for p in $routes; do
    c=$(code -X GET --data x "$SERVE_URL$p")
    check "GET $p with a body: answered ($c)" test "$c" != 000
    check "GET $p with a body: the server lives" alive
done
c=$(code -X GET --data x "$SERVE_URL/healthz")
check "GET /healthz with a small body: the body is ignored (503, as without one)" test "$c" = 503
head -c 70000 /dev/zero | tr '\0' x >"$tmp/70k"
c=$(code -X GET -H 'Expect:' --data-binary "@$tmp/70k" "$SERVE_URL/healthz")
check "GET /healthz with a 70000-byte body: 413" test "$c" = 413
check "...and the server lives" alive
c=$(code -X GET -H 'Transfer-Encoding: chunked' --data-binary "@$tmp/70k" "$SERVE_URL/login")
check "GET /login with a chunked 70000-byte body: 413 ($c)" test "$c" = 413
check "...and the server lives" alive

# HEAD with a body (curl will not send one): a raw request
python3 - "$SERVE_PORT" >"$tmp/head.out" 2>&1 <<'PYEOF'
import socket, sys
port = int(sys.argv[1])
for path in ("/healthz", "/login", "/static/app.css", "/api/v1/jobs", "/jobs"):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"HEAD %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 5\r\n"
              b"Connection: close\r\n\r\nhello" % (path.encode(), port))
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    print(path, got.split(b"\r\n", 1)[0].decode())
PYEOF
check "HEAD with a body: every route answered" test "$(grep -c ' HTTP/1.1 [0-9]' "$tmp/head.out")" = 5
check "HEAD /healthz with a body: 503 (as without one)" has "$tmp/head.out" "^/healthz HTTP/1.1 503"
check "HEAD with a body: the server lives" alive

# ---- an upload over the limit without Expect: 100-continue -----------------------
python3 - "$SERVE_URL" >"$tmp/urllib.out" 2>&1 <<'PYEOF'
import json, sys, urllib.error, urllib.request
url = sys.argv[1] + "/api/v1/analyses"
body = (b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\n\r\n'
        + b"x" * (20 << 20) + b"\r\n--B--\r\n")
req = urllib.request.Request(url, data=body, method="POST",
                             headers={"Content-Type": "multipart/form-data; boundary=B"})
try:
    urllib.request.urlopen(req, timeout=120)
    print("accepted")
except urllib.error.HTTPError as e:
    print("status", e.code, json.load(e)["error"]["status"])
except Exception as e:
    print("error", type(e).__name__, e)
PYEOF
E2E_OUT=$tmp/urllib.out
check "urllib upload over --max-upload-bytes: it reads the 413" has "$tmp/urllib.out" "^status 413 413$"
E2E_OUT=$tmp/out
check "...DATA/tmp is empty" test -z "$(ls -A "$data/tmp")"
check "...the server lives" alive
# the same without a Content-Length: urllib sends an iterable body chunked,
# whole, before it reads (20 MiB past the limit)
python3 - "$SERVE_URL" >"$tmp/urllib-chunked.out" 2>&1 <<'PYEOF'
import json, sys, urllib.error, urllib.request
url = sys.argv[1] + "/api/v1/analyses?name=a.log"
def body():
    for _ in range(320):
        yield b"x" * 65536
req = urllib.request.Request(url, data=body(), method="POST",
                             headers={"Content-Type": "application/octet-stream"})
try:
    urllib.request.urlopen(req, timeout=120)
    print("accepted")
except urllib.error.HTTPError as e:
    print("status", e.code, json.load(e)["error"]["status"],
          e.headers.get("Transfer-Encoding") is None)
except Exception as e:
    print("error", type(e).__name__, e)
PYEOF
E2E_OUT=$tmp/urllib-chunked.out
check "urllib chunked upload over --max-upload-bytes: it reads the 413" has "$tmp/urllib-chunked.out" "^status 413 413"
E2E_OUT=$tmp/out
check "...DATA/tmp is empty" test -z "$(ls -A "$data/tmp")"
check "...the server lives" alive

# ---- cursors -----------------------------------------------------------------------
for p in "/api/v1/analyses?before=%00" "/api/v1/jobs?before=%00" \
    "/api/v1/jobs/x/runs?before=%00" "/api/v1/analyses?before=%zz" \
    "/api/v1/jobs?limit=%00" "/jobs?before=%00"; do
    check "$p: 400" test "$(code "$SERVE_URL$p")" = 400
done

# ---- a decision against a store newer than this optipipe ---------------------------
c=$(code -H 'Content-Type: application/json' \
    --data '{"fingerprint": "0123456789abcdef", "status": "approved"}' \
    "$SERVE_URL/api/v1/decisions")
check "decision on a newer-schema store: 5xx ($c)" test "${c:0:1}" = 5
check "...the message says the schema" has "$tmp/out" "newer than this optipipe"

check "the server lives to the end" alive
check "SIGTERM stops it with 0" serve_stop
finish
