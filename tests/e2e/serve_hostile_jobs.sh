#!/usr/bin/env bash
# `optipipe serve` against a hostile uploader, after the upload was
# accepted (serve/serve_jobs.c, serve/serve_worker.c): a zip is unpacked into
# a private TMPDIR inside the analysis folder, which is gone once the
# worker ended, also when it was killed; URL inputs follow no redirect
# (the host was checked against --fetch-allow only for the first URL).
# Usage: serve_hostile_jobs.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1

python3 - "$demo/flink-window-bottleneck.json" <<'PY'
import sys, zipfile
with zipfile.ZipFile("in.zip", "w") as z:
    z.write(sys.argv[1], "flink.json")
PY

# The worker and its rule workers are paused at test hooks (tests/e2e/lib/
# check.sh, docs/testing.md): each state below is held, not raced.
ppid_of() { ps -o ppid= -p "$1" | tr -d ' '; }
hooks_on
serve_start "$tmp/data0" || { echo "FAIL: the server did not start"; cat "$SERVE_ERR"; exit 1; }
if ! grep -q "test hooks active" "$SERVE_ERR"; then
    echo "SKIP: this optipipe is built without test hooks (OP_TEST_HOOKS=OFF)"
    exit 77
fi
serve_stop
# ... but never beyond loopback, nor in a folder others can write
token=0123456789abcdef-hooks-token
printf '%s\n' "$token" >tokens && chmod 600 tokens
serve_start "$tmp/data0" --listen 0.0.0.0:0 --token-file tokens
check "beyond loopback the server refuses the hooks" \
    grep -q "OPTIPIPE_TEST_HOOKS ignored: the server listens beyond loopback" "$SERVE_ERR"
check "... and says nothing of them active" sh -c "! grep -q 'test hooks active' '$SERVE_ERR'"
check "server stops" serve_stop
mkdir -m 777 open && chmod 777 open
OPTIPIPE_TEST_HOOKS=$tmp/open serve_start "$tmp/data0"
check "a hooks folder others can write is refused" \
    grep -q "OPTIPIPE_TEST_HOOKS ignored: not owned by this user, or writable by others" "$SERVE_ERR"
check "server stops" serve_stop

# ---- a worker killed while its zip is unpacked leaves no tree behind ---------------------
mkdir systmp
zips() { # the unpacked trees, wherever they are; fails when there is none
    local d found=1
    for d in "$tmp"/systmp/optipipe-zip-* "$tmp"/data/analyses/*/tmp/optipipe-zip-*; do
        [ -e "$d" ] && echo "$d" && found=0
    done
    return $found
}
hooks_on
hook_pause zip.unpacked
TMPDIR=$tmp/systmp serve_start "$tmp/data"
[ -n "$SERVE_PID" ] || { cat "$SERVE_ERR"; finish; exit 1; }
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@in.zip" "$SERVE_URL/api/v1/analyses")
check "zip upload: 202" test "$code" = 202
id=$(json_field up.json id)
wpid=$(hook_wait zip.unpacked)
check "the worker unpacked the zip (paused there)" test -n "$wpid"
check "... it is the server's worker" test "$(ppid_of "$wpid")" = "$SERVE_PID"
check "... the tree is there" eval 'zips >/dev/null'
check "... not in the server's TMPDIR" test -z "$(ls "$tmp/systmp")"
check "... but in the analysis folder" test -n "$(ls -d "$tmp"/data/analyses/"$id"/tmp/optipipe-zip-* 2>/dev/null)"
[ -n "$wpid" ] && kill -9 "$wpid"
check "the analysis ends" serve_poll 600 serve_ended "$id"
check "... failed" test "$(serve_status "$id")" = failed
check "no unpacked tree left" test -z "$(zips)"
check "no TMPDIR left in the analysis" test ! -e "$tmp/data/analyses/$id/tmp"
check "server stops" serve_stop
hook_release zip.unpacked

# ---- a URL input on an allowed host that redirects to another host ---------------------
# The test's own server on 127.0.0.1 answers every request with a redirect
# to localhost (a host not in --fetch-allow) and logs each path it is asked.
cat >redir.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open("hits.log", "a") as f:
            f.write(self.path + "\n")
        self.send_response(302)
        self.send_header("Location", "http://localhost:%d/moved%s" % (self.server.server_port, self.path))
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open("redir.port.tmp", "w").write(str(s.server_port))
__import__("os").rename("redir.port.tmp", "redir.port")
s.serve_forever()
PY
python3 redir.py &
redir_pid=$!
check "redirecting server up" serve_poll 300 test -s redir.port
rport=$(cat redir.port)
check "server, --fetch-allow 127.0.0.1" serve_start "$tmp/data2" --fetch-allow 127.0.0.1
code=$(curl -s -o up.json -w '%{http_code}' -F "url=http://127.0.0.1:$rport/jobs" \
    "$SERVE_URL/api/v1/analyses")
check "URL upload: 202" test "$code" = 202
id=$(json_field up.json id)
check "the analysis ends" serve_poll 600 serve_ended "$id"
check "the allowed host was asked" test -s hits.log
check "the redirect to another host was not followed" sh -c '! grep -q "^/moved" hits.log'
check "the worker says why" grep -q "redirect.*refused" "$tmp/data2/analyses/$id/worker.log"
check "server stops" serve_stop
kill "$redir_pid" 2>/dev/null
wait "$redir_pid" 2>/dev/null

# ---- a rule worker (the worker's child) busy in C dies with a server killed by kill -9 ------
# A Lua pattern backtracks inside C, where no instruction hook runs: only
# its parent's kill stops it, so it must die when its parent does.
cat >stuck.lua <<'LUA'
return {
  id = "t.stuck", title = "Stuck in C", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    string.find(string.rep("a", 20000), ".-.-.-.-.-.-b")
  end,
}
LUA
hooks_on
hook_pause rules.worker.run
check "server with rule uploads" serve_start "$tmp/data3" --allow-rule-upload --analysis-timeout 120
f=$demo/flink-window-bottleneck.json
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@$f" -F "file=@$f" -F "file=@$f" \
    -F "file=@$f" -F "file=@$f" -F "file=@$f" -F "rules=@stuck.lua" "$SERVE_URL/api/v1/analyses")
check "upload with the rule: 202" test "$code" = 202
rpid=$(hook_wait rules.worker.run)
wpid=$(hook_wait serve.worker)
check "a rule worker runs (held at its start)" test -n "$rpid" -a -n "$wpid"
check "... a child of the analysis worker" test "$(ppid_of "$rpid")" = "$wpid"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
group_gone() { ! pgrep -g "$wpid" >/dev/null; }
check "the worker and its rule worker die with the server" wait_until group_gone
[ -n "$wpid" ] && kill -9 -- "-$wpid" 2>/dev/null
hook_release rules.worker.run
unset OPTIPIPE_TEST_HOOKS

# ---- DATA/analyses/ID a symlink to a folder elsewhere: skipped at restart, never written ------
mkdir -p data4/analyses outside/tmp outside/inputs
cp "$demo/flink-window-bottleneck.json" outside/inputs/
echo keep >outside/tmp/keep
sid=0123456789abcdef
printf '{"id":"%s","state":"running","created_ms":1,"started_ms":1,"finished_ms":0,"exit_code":-1,"error":"","files":1,"bytes":1}\n' \
    "$sid" >outside/meta.json
cp outside/meta.json meta.orig
ln -s "$tmp/outside" "data4/analyses/$sid"
check "server on a DATA with a symlinked analysis" serve_start "$tmp/data4"
check "... says it skipped it" serve_poll 300 grep -q "$sid.*not a folder" "$SERVE_ERR"
check "... does not list it" test "$(serve_get "/api/v1/analyses/$sid" s.json)" = 404
check "the folder it points to is not touched" sh -c \
    'test -f outside/tmp/keep && test ! -e outside/worker.log && cmp -s outside/meta.json meta.orig'
check "server stops" serve_stop

# ---- no page or API answer names the server's folders -----------------------------------
# (warnings about a zip member and a repeated capture name their files)
python3 - "$demo/flink-window-bottleneck.json" <<'PY'
import sys, zipfile
with zipfile.ZipFile("warn.zip", "w") as z:
    z.write(sys.argv[1], "a/flink.json")
    link = zipfile.ZipInfo("a/link")
    link.external_attr = 0o120777 << 16
    z.writestr(link, "/etc/passwd")
PY
check "server" serve_start "$tmp/data5"
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@warn.zip" \
    -F "file=@$demo/flink-window-bottleneck.json" "$SERVE_URL/api/v1/analyses")
check "upload: 202" test "$code" = 202
id=$(json_field up.json id)
check "it ends" serve_poll 600 serve_ended "$id"
check "... done" test "$(serve_status "$id")" = done
serve_get "/api/v1/analyses/$id" leak.json >/dev/null
serve_get "/analyses/$id" leak.html >/dev/null
serve_get "/analyses/$id/report.html" leak2.html >/dev/null
check "the zip's symlink member is refused" grep -q "a/link.*not read" leak.json
check "the API names no server folder" sh -c "! grep -F '$tmp/' leak.json"
check "the analysis page names no server folder" sh -c "! grep -F '$tmp/' leak.html"
check "report.html names no server folder" sh -c "! grep -F '$tmp/' leak2.html"
serve_post_json /api/v1/decisions '{"fingerprint":"0000000000000000","status":"approved"}' \
    dec.json >dec.code
check "a decision for no stored finding: 404" test "$(cat dec.code)" = 404
check "... its message names no server folder" sh -c "! grep -F '$tmp/' dec.json"
check "server stops" serve_stop

# ---- a tampered DATA: meta.json a FIFO, or not ours; the server starts and skips them -------
mkdir -p data6/analyses/00000000000000aa data6/analyses/00000000000000bb
mkfifo data6/analyses/00000000000000aa/meta.json
printf '{"id":"00000000000000bb","state":"done","created_ms":1,"started_ms":1,"finished_ms":1e300,"exit_code":0,"error":"<script>","files":1,"bytes":1}' \
    >data6/analyses/00000000000000bb/meta.json
check "server on a tampered DATA starts" serve_start "$tmp/data6"
check "... skips the FIFO" grep -q "00000000000000aa/meta.json.*skipped" "$SERVE_ERR"
check "... skips the meta.json out of range" grep -q "00000000000000bb/meta.json.*skipped" "$SERVE_ERR"
check "server stops" serve_stop

finish
