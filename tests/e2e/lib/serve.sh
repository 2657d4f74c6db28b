# tests/e2e/lib/serve.sh - what the `optipipe serve` e2e tests share: start
# a server of their own on a loopback ephemeral port, stop it, read JSON.
# Source it after lib/check.sh (it needs $bin and $tmp).
#
#   serve_start DATA [ARGS...]  starts "$bin serve --listen 127.0.0.1:0
#                               --data DATA ARGS" in the background, waits
#                               (bounded by OP_TEST_WAIT_S) for its
#                               "listening on" line; exports SERVE_URL,
#                               SERVE_PORT, SERVE_PID, SERVE_ERR (its stderr)
#                               and installs an EXIT trap that stops it.
#                               Returns 1 when it exited or never listened.
#   serve_stop                  SIGTERM, wait (bounded by OP_TEST_WAIT_S,
#                               then SIGKILL and 1); returns the server's
#                               exit code
#   json_field FILE PATH        prints a field of a JSON file: PATH is a
#                               dotted path ("report.findings.0.rule");
#                               exit 1 when absent
#   serve_poll N CMD...         wait_until CMD (lib/check.sh) with a bound of
#                               N tenths of a second or OP_TEST_WAIT_S,
#                               whichever is longer: a safety net, not a
#                               synchronisation
#   serve_get PATH FILE         GET $SERVE_URL$PATH, the body into FILE, the
#                               status code printed
#   serve_post_json PATH BODY FILE  POST BODY as application/json, the same
# Other helpers add their functions at the end of this file.

SERVE_PID=
SERVE_URL=
SERVE_PORT=
SERVE_ERR=

_serve_cleanup() {
    if [ -n "$SERVE_PID" ]; then
        kill "$SERVE_PID" 2>/dev/null
        wait "$SERVE_PID" 2>/dev/null
        SERVE_PID=
    fi
    rm -rf "$tmp"
}
trap _serve_cleanup EXIT

serve_start() {
    local data=$1 i
    shift
    SERVE_ERR=$tmp/serve.$$.$RANDOM.err
    "$bin" serve --listen 127.0.0.1:0 --data "$data" "$@" 2>"$SERVE_ERR" &
    SERVE_PID=$!
    local end=$((SECONDS + ${OP_TEST_WAIT_S:-120}))
    while [ "$SECONDS" -lt "$end" ]; do
        if grep -q '^optipipe serve: listening on http://' "$SERVE_ERR"; then
            SERVE_URL=$(sed -n 's/^optipipe serve: listening on \(http:[^ ]*\)$/\1/p' \
                "$SERVE_ERR" | head -1)
            SERVE_PORT=${SERVE_URL##*:}
            export SERVE_URL SERVE_PORT SERVE_PID SERVE_ERR
            return 0
        fi
        if ! kill -0 "$SERVE_PID" 2>/dev/null; then
            wait "$SERVE_PID" 2>/dev/null
            SERVE_PID=
            return 1
        fi
        sleep 0.05
    done
    return 1
}

serve_stop() { # bounded (OP_TEST_WAIT_S): a server still there then is killed, 1
    local rc=0
    [ -n "$SERVE_PID" ] || return 0
    kill -TERM "$SERVE_PID" 2>/dev/null
    wait_until _serve_gone
    if kill -0 "$SERVE_PID" 2>/dev/null; then
        echo "serve_stop: the server did not stop on SIGTERM" >&2
        kill -KILL "$SERVE_PID" 2>/dev/null
        wait "$SERVE_PID" 2>/dev/null
        SERVE_PID=
        return 1
    fi
    wait "$SERVE_PID"
    rc=$?
    SERVE_PID=
    return $rc
}

json_field() {
    python3 - "$1" "$2" <<'PYEOF'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split(".") if sys.argv[2] else []:
    if isinstance(v, list):
        if not k.isdigit() or int(k) >= len(v):
            sys.exit(1)
        v = v[int(k)]
    elif isinstance(v, dict) and k in v:
        v = v[k]
    else:
        sys.exit(1)
print(json.dumps(v) if isinstance(v, (dict, list)) else
      ("null" if v is None else str(v).lower() if isinstance(v, bool) else v))
PYEOF
}

_serve_gone() { ! kill -0 "$SERVE_PID" 2>/dev/null; }
serve_poll() {
    local n=$(($1 / 10)) w=${OP_TEST_WAIT_S:-120}
    shift
    OP_TEST_WAIT_S=$((n > w ? n : w)) wait_until "$@"
}

# hold_start DIR               a URL input that blocks until the test says
#                              so: a python3 HTTP server on 127.0.0.1 that
#                              appends each request's path to DIR/asked and
#                              answers it (404) only once DIR/release exists
#                              (bounded: 1 h, a safety net; the trap
#                              releases it). Exports HOLD_URL
#                              (http://127.0.0.1:PORT) and HOLD_PID; the EXIT
#                              trap releases it, stops it and then the server.
hold_start() {
    local dir=$1
    cat >"$dir/hold.py" <<'PYEOF'
import http.server, os, sys, time
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(os.path.join(d, "asked"), "a") as f:
            f.write(self.path + "\n")
        end = time.monotonic() + 3600
        while time.monotonic() < end:
            if os.path.exists(os.path.join(d, "release")):
                break
            time.sleep(0.05)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
with open(os.path.join(d, "hold.port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(d, "hold.port.tmp"), os.path.join(d, "hold.port"))
s.serve_forever()
PYEOF
    python3 "$dir/hold.py" "$dir" &
    HOLD_PID=$!
    trap "touch '$dir/release'; kill $HOLD_PID 2>/dev/null; wait $HOLD_PID 2>/dev/null; _serve_cleanup" EXIT
    wait_until test -s "$dir/hold.port" || return 1
    HOLD_URL=http://127.0.0.1:$(cat "$dir/hold.port")
    export HOLD_URL HOLD_PID
}

serve_get() {
    curl -s -o "$2" -w '%{http_code}' "$SERVE_URL$1"
}

serve_post_json() {
    curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary "$2" "$SERVE_URL$1"
}

# serve_status ID              prints analysis ID's status (queued, running,
#                              done, failed, record-failed) from GET /api/v1/analyses/ID
# serve_ended ID               succeeds when analysis ID is done, failed or
#                              record-failed
serve_status() {
    serve_get "/api/v1/analyses/$1" "$tmp/serve_status.json" >/dev/null &&
        json_field "$tmp/serve_status.json" status
}
serve_ended() { case $(serve_status "$1") in done | failed | record-failed) return 0 ;; esac; return 1; }

# json_eval FILE EXPR: prints the Python expression EXPR over the JSON
# document of FILE (bound to d), e.g. "[f['rule'] for f in d['findings']]"
json_eval() {
    python3 - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PYEOF
}
# json_is FILE EXPR EXPECTED: json_eval's output is EXPECTED (else says both)
json_is() {
    local got
    got=$(json_eval "$1" "$2" 2>&1)
    [ "$got" = "$3" ] || { echo "  $2 = $got, expected $3"; return 1; }
}
