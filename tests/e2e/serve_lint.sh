#!/usr/bin/env bash
# POST /api/v1/rules/lint (serve/serve_lint.c, docs/api.md) on a loopback
# server: an uploaded pack linted by the code of `optipipe rules lint`
# (the same problems, counted the same), as multipart .lua files, a raw
# body, a .zip of a bundled pack folder; a zip member climbing out is
# refused and nothing lands outside; a rule that loops at load time is
# one problem and the server answers on; the answer validates against
# docs/openapi.json; 400s, 413 over --max-upload-bytes, 403 without
# --allow-rule-upload, 401 without a token where tokens are required.
# Usage: serve_lint.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$tmp" || exit 1

# lint FILE CURL_ARGS...: POSTs to the route, the body into FILE, the code printed
lint() {
    local out=$1
    shift
    curl -s -o "$out" -w '%{http_code}' "$@" "$SERVE_URL/api/v1/rules/lint"
}
is_error() { # is_error FILE STATUS
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; sys.exit(e["status"] != int(sys.argv[2]))' "$1" "$2"
}
# valid FILE: the 200 answer matches components.schemas.lint_result
valid() {
    python3 - "$src" "$1" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1] + "/tests/schemas")
from validate import Validator
doc = json.load(open(sys.argv[1] + "/docs/openapi.json"))
v = Validator(doc)
v.check({"$ref": "#/components/schemas/lint_result"}, json.load(open(sys.argv[2])), "$")
errors = getattr(v, "errors", [])
if errors:
    print(errors)
    sys.exit(1)
EOF
}
# has_problem FILE RULE TEXT: a problem of RULE whose message holds TEXT
has_problem() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not any(p["rule"] == (sys.argv[2] or None) and sys.argv[3] in p["message"] for p in d["problems"]))' "$@"
}

# ---- a pack of our own: one clean rule, one with problems, one that loops ----
mkdir -p pack/docs
cat >pack/clean.lua <<'EOF'
return { id = "lt.clean", title = "Clean", severity = "warning", sources = { "spark" },
  options = { limit = 10 },
  check = function(run, ctx)
    if #run.nodes > ctx.options.limit then ctx.report { message = "many" } end
  end }
EOF
cat >pack/clean_test.lua <<'EOF'
return { rule = "lt.clean", cases = { { name = "quiet", inputs = { { source = "spark", id = "a", nodes = {} } }, expect = {} } } }
EOF
printf '# lt.clean\n\nDetects many nodes.\n' >pack/docs/lt.clean.md
cat >pack/messy.lua <<'EOF'
return { id = "lt.messy", title = "Messy", severity = "warning", sources = { "spark" },
  options = { unused = 1 },
  check = function(run, ctx)
    if ctx.options.missing then ctx.report { message = "x" } end
  end }
EOF
cat >pack/loops.lua <<'EOF'
while true do end
EOF
"$bin" rules lint pack >cli.out 2>&1
cli_count=$(sed -n 's/^\([0-9]*\) problem(s) in .*/\1/p' cli.out)

check "server starts" serve_start "$tmp/data" --allow-rule-upload --max-upload-bytes 200k
code=$(lint multi.json -F rules=@pack/clean.lua -F rules=@pack/clean_test.lua \
    -F rules=@pack/docs/lt.clean.md -F file=@pack/messy.lua -F rules=@pack/loops.lua)
E2E_OUT=$tmp/multi.json
check "multipart: 200" test "$code" = 200
check "multipart: the answer validates against openapi.json" valid multi.json
check "multipart: two rules linted (the looping file loads none)" \
    test "$(json_field multi.json rules)" = 2
check "multipart: an option read without a default" \
    has_problem multi.json lt.messy "option 'missing' is read but has no default"
check "multipart: an option never read" \
    has_problem multi.json lt.messy "option 'unused' is declared but never read"
check "multipart: no docs page, named in the pack" \
    has_problem multi.json lt.messy "no docs page (write docs/lt.messy.md)"
check "multipart: the looping file is a load problem of the pack" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not any(p["file"] == "loops.lua" and p["rule"] is None and "does not load" in p["message"] for p in d["problems"]))' multi.json
check "multipart: the clean rule has no problem" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(any(p["rule"] == "lt.clean" for p in d["problems"]))' multi.json
check "multipart: as many problems as rules lint counts" \
    test "$(json_field multi.json problem_count)" = "$cli_count"
check "multipart: no server path in the answer" \
    bash -c '! grep -q "$1" "$2"' _ "$tmp/data" multi.json
check "the server answers after the looping pack" \
    test "$(serve_get /healthz health.out)" = 200

code=$(curl -s -o raw.json -w '%{http_code}' --data-binary @pack/messy.lua \
    -H 'Content-Type: application/octet-stream' "$SERVE_URL/api/v1/rules/lint?name=messy.lua")
E2E_OUT=$tmp/raw.json
check "raw body: 200" test "$code" = 200
check "raw body: named by ?name" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["problems"] or d["problems"][0]["file"] != "messy.lua")' raw.json

# a bundled pack as a zip of its folder: lints as the CLI lints it
(cd "$src/rules" && python3 - "$tmp/dbt.zip" <<'EOF'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for dp, _, fs in os.walk("dbt"):
        for f in fs:
            z.write(os.path.join(dp, f))
EOF
)
"$bin" rules lint "$src/rules/dbt" >dbt-cli.out 2>&1
code=$(lint dbt.json -F file=@dbt.zip)
E2E_OUT=$tmp/dbt.json
check "zip: 200" test "$code" = 200
check "zip: every rule of the pack folder" \
    test "$(json_field dbt.json rules)" = "$(ls "$src"/rules/dbt/*.lua | grep -vc '_test\.lua$')"
check "zip: the CLI's count of problems" \
    test "$(json_field dbt.json problem_count)" = "$(sed -n 's/^\([0-9]*\) problem(s) in .*/\1/p' dbt-cli.out)"

python3 - evil.zip <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("ok.lua", 'return { id = "lt.ok", title = "Ok", severity = "info", sources = { "spark" }, check = function() end }\n')
    z.writestr("../evil.lua", "return {}\n")
EOF
code=$(lint evil.json -F file=@evil.zip)
E2E_OUT=$tmp/evil.json
check "zip climbing out: 200, the member refused" \
    bash -c 'test "$1" = 200 && test "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"refused_count\"])" "$2")" = 1' _ "$code" evil.json
check "zip climbing out: the other member linted" test "$(json_field evil.json rules)" = 1
check "zip climbing out: nothing written outside" \
    bash -c 'test -z "$(find "$1" -name evil.lua)"' _ "$tmp/data"
check "the staging folders are gone" \
    bash -c 'test -z "$(ls -A "$1/tmp" 2>/dev/null)"' _ "$tmp/data"

code=$(lint none.json -F note=x)
check "no file: 400" test "$code" = 400
check "no file: a JSON error" is_error none.json 400
printf 'x' >notes.txt
code=$(lint txt.json -F file=@notes.txt)
check "a .txt: 400" test "$code" = 400
head -c 300000 /dev/zero | tr '\0' 'x' >big.lua
code=$(lint big.json -F rules=@big.lua)
check "over --max-upload-bytes: 413" test "$code" = 413
check "server stops" serve_stop

check "without --allow-rule-upload: server starts" serve_start "$tmp/data2"
code=$(lint off.json -F rules=@pack/clean.lua)
check "without --allow-rule-upload: 403" test "$code" = 403
check "without --allow-rule-upload: a JSON error" is_error off.json 403
check "server stops" serve_stop

printf 'lint-test-token-0123456789\n' >tokens
chmod 600 tokens
check "with tokens: server starts" serve_start "$tmp/data3" --allow-rule-upload --token-file tokens
code=$(lint anon.json -F rules=@pack/clean.lua)
check "no token: 401" test "$code" = 401
code=$(lint tok.json -H 'Authorization: Bearer lint-test-token-0123456789' -F rules=@pack/clean.lua)
check "a token: 200" test "$code" = 200
check "server stops" serve_stop
finish
