#!/usr/bin/env bash
# `optipipe serve` against a hostile uploader, after the upload was
# accepted (cli/serve_jobs.c, cli/serve_worker.c): a zip is unpacked into
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

cat >loop.lua <<'LUA'
return {
  id = "t.loop", title = "Loops", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    while true do end
  end,
}
LUA
python3 - "$demo/flink-window-bottleneck.json" <<'PY'
import sys, zipfile
with zipfile.ZipFile("in.zip", "w") as z:
    z.write(sys.argv[1], "flink.json")
PY

# ---- a worker killed while its zip is unpacked leaves no tree behind ---------------------
mkdir systmp
zips() { # the unpacked trees, wherever they are; fails when there is none
    local d found=1
    for d in "$tmp"/systmp/optipipe-zip-* "$tmp"/data/analyses/*/tmp/optipipe-zip-*; do
        [ -e "$d" ] && echo "$d" && found=0
    done
    return $found
}
worker_pid() { pgrep -P "$SERVE_PID" | head -1; }
TMPDIR=$tmp/systmp serve_start "$tmp/data" --allow-rule-upload
[ -n "$SERVE_PID" ] || { cat "$SERVE_ERR"; finish; exit 1; }
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@in.zip" -F "rules=@loop.lua" \
    "$SERVE_URL/api/v1/analyses")
check "zip upload: 202" test "$code" = 202
id=$(json_field up.json id)
check "the zip is unpacked while the rule loops" serve_poll 300 eval 'zips >/dev/null'
check "... not in the server's TMPDIR" test -z "$(ls "$tmp/systmp")"
check "... but in the analysis folder" test -n "$(ls -d "$tmp"/data/analyses/"$id"/tmp/optipipe-zip-* 2>/dev/null)"
wpid=$(worker_pid)
check "the worker is found" test -n "$wpid"
[ -n "$wpid" ] && kill -9 "$wpid"
check "the analysis ends" serve_poll 600 serve_ended "$id"
check "... failed" test "$(serve_status "$id")" = failed
check "no unpacked tree left" test -z "$(zips)"
check "no TMPDIR left in the analysis" test ! -e "$tmp/data/analyses/$id/tmp"
check "server stops" serve_stop

finish
