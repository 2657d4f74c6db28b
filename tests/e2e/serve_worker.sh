#!/usr/bin/env bash
# `optipipe serve --worker ID` (serve/serve_worker.c), through the server and
# run by hand: uploaded rules run only with --allow-rule-upload, as a user
# pack under the rule limits (a looping rule is a rule error, exit 5, the
# analysis still done with every other finding); the worker checks the id,
# checks each URL of urls.txt against --fetch-allow again, and does nothing
# when the server that started it is gone.
# Usage: serve_worker.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo
cd "$tmp" || exit 1


cat >hello.lua <<'EOF'
return {
  id = "t.hello", title = "Hello from an uploaded rule", severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    ctx.report { message = "hello " .. run.id }
  end,
}
EOF
cat >loop.lua <<'EOF'
return {
  id = "t.loop", title = "Loops forever", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    while true do end
  end,
}
EOF

# ---- uploaded rules, allowed -------------------------------------------------------------
check "server with rule uploads" serve_start "$tmp/data" --allow-rule-upload
[ -n "$SERVE_PID" ] || { cat "$SERVE_ERR"; finish; exit 1; }
code=$(curl -s -o up.json -w '%{http_code}' -F "file=@$demo/flink-window-bottleneck.json" \
    -F "rules=@hello.lua" -F "rules=@loop.lua" "$SERVE_URL/api/v1/analyses")
check "upload with rules: 202" test "$code" = 202
id=$(json_field up.json id)
check "it ends" serve_poll 600 serve_ended "$id"
serve_get "/api/v1/analyses/$id" a.json >/dev/null
check "done, exit 5 (a rule failed)" test "$(json_field a.json status)/$(json_field a.json exit_code)" = done/5
check "the uploaded rule's finding, the loop a rule error, bundled findings kept" python3 -c '
import json
r = json.load(open("a.json"))["report"]
rules = {f["rule"] for f in r["findings"]}
assert "t.hello" in rules and "flink.bottleneck" in rules, rules
errs = [e for e in r["rule_errors"] if e["rule"] == "t.loop"]
assert errs and ("budget" in errs[0]["error"] or "timeout" in errs[0]["error"]), r["rule_errors"]'
check "server stops" serve_stop

# ---- the same analysis by hand, without --allow-rule-upload: rules/ is not read ---------------
a=$tmp/data/analyses/$id
mv "$a/report.json" report.first.json
OPTIPIPE_SERVE_PARENT=$$ "$bin" serve --worker "$id" --data "$tmp/data" >out 2>err
check "worker by hand: exit 0" test $? = 0
check "... no uploaded rule ran" python3 -c '
import json
r = json.load(open("'"$a"'/report.json"))
assert not any(f["rule"].startswith("t.") for f in r["findings"]), r["findings"]
assert not r["rule_errors"], r["rule_errors"]'

# ---- what the worker refuses ---------------------------------------------------------------
rm -f "$a/report.json"
printf 'http://10.0.0.1/jobs/overview\n' >"$a/urls.txt"
OPTIPIPE_SERVE_PARENT=$$ "$bin" serve --worker "$id" --data "$tmp/data" \
    --fetch-allow 127.0.0.1 >out 2>err
check "a URL off --fetch-allow: exit 2" test $? = 2
check "... said" has err "http://10.0.0.1/jobs/overview: host not in --fetch-allow"
check "... no report" test ! -e "$a/report.json"
rm "$a/urls.txt"
OPTIPIPE_SERVE_PARENT=$$ "$bin" serve --worker ../../etc --data "$tmp/data" >out 2>err
check "an id that is a path: exit 2" test $? = 2
check "... said" has err "not an analysis id"
OPTIPIPE_SERVE_PARENT=1 "$bin" serve --worker "$id" --data "$tmp/data" >out 2>err
check "the server that started it is gone: exit 3" test $? = 3
check "... and nothing done" test ! -e "$a/report.json"
finish
