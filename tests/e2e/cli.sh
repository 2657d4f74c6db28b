#!/usr/bin/env bash
# End-to-end tests of the command line: exit codes, stderr naming the
# input, formats, mixed good and bad inputs, user rules, external plugins.
# Usage: cli.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=$tmp/out
E2E_ERR=$tmp/err

run() { # run ARGS... : records exit code in $rc
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

demo="$src/fixtures/demo"
flink_fixture=$(ls "$demo"/flink-*.json 2>/dev/null | head -1)

run --version
check "--version exits 0" test $rc = 0
check "--version names the version" has "$tmp/out" "optipipe 0.1.0"
run --help
check "--help exits 0" test $rc = 0
check "--help lists analyze" has "$tmp/out" "analyze"
run analyze --help
check "analyze --help mentions --fail-on" has "$tmp/out" "--fail-on"
run
check "no command is a usage error" test $rc = 2
run frobnicate
check "unknown command exits 2" test $rc = 2
run analyze --bogus x
check "unknown option exits 2" test $rc = 2
run analyze --format yaml "$demo"
check "unknown format exits 2" test $rc = 2
run analyze --fail-on fatal "$demo"
check "bad --fail-on exits 2" test $rc = 2
run analyze
check "analyze without input exits 2" test $rc = 2
run analyze --pack nosuchpack "$demo"
check "unknown pack exits 2" test $rc = 2

run analyze "$tmp/does-not-exist.json"
check "missing input exits 3" test $rc = 3
check "missing input is named on stderr" has "$tmp/err" "does-not-exist.json"
# beside inputs that read, a path that does not exist still fails the run
# (a typo in a nightly job's path must not pass silently), after the report
run analyze -q "$tmp/does-not-exist.json" "$demo"
check "a missing input beside good ones exits 2 (also with -q)" test $rc = 2
check "... the others are still analyzed" has "$tmp/out" "^opti-pipe 0.1.0: "
check "... the path is named on stderr" has "$tmp/err" "does-not-exist.json: error: "
check "... and how to accept it" has "$tmp/err" "1 input does not exist (named above); exit 2 (--allow-missing to accept)"
run analyze -q --allow-missing "$tmp/does-not-exist.json" "$demo"
check "--allow-missing: exit 0" test $rc = 0
check "--allow-missing: the path is still named" has "$tmp/err" "does-not-exist.json: error: "

printf 'just some text\n' >"$tmp/unknown.txt"
run analyze "$tmp/unknown.txt"
check "unrecognized input exits 3" test $rc = 3
check "unrecognized input is named" has "$tmp/err" "unknown.txt: warning: not recognized"

run analyze "$demo"
check "demo analyzes" test $rc = 0
check "demo text report has a header" has "$tmp/out" "opti-pipe 0.1.0"

run analyze --format json --deterministic "$demo"
check "demo json exits 0" test $rc = 0
cp "$tmp/out" "$tmp/demo.json"
check "demo json parses" json_ok "$tmp/demo.json"
check "json has schema 1" has "$tmp/demo.json" '"schema": 1'
check "json has zero elapsed with --deterministic" has "$tmp/demo.json" '"elapsed_ms": 0'
run analyze --format json --deterministic "$demo"
check "json is identical across reruns" cmp -s "$tmp/out" "$tmp/demo.json"

run analyze --format json -o "$tmp/report.json" "$demo"
check "-o writes the file" json_ok "$tmp/report.json"
check "-o leaves stdout empty" test ! -s "$tmp/out"

if [ -n "$flink_fixture" ]; then
    run analyze --fail-on warning "$flink_fixture"
    check "--fail-on warning exits 1 on the flink demo" test $rc = 1
    check "flink.bottleneck is in the demo" has "$tmp/out" "flink.bottleneck"
    run analyze --fail-on error --pack flink "$flink_fixture"
    check "--pack flink runs" test $rc = 0 -o $rc = 1

    # A directory mixing a good file with bad ones: the good one is analyzed.
    mkdir -p "$tmp/mixed/sub" "$tmp/mixed/.hidden"
    cp "$flink_fixture" "$tmp/mixed/good.json"
    printf '{"flink_rest_export": 1, "responses": {' >"$tmp/mixed/truncated.json"
    head -c 3000 /dev/urandom >"$tmp/mixed/sub/garbage.bin"
    printf 'broken' >"$tmp/mixed/.hidden/secret.json"
    run analyze --format json "$tmp/mixed"
    check "mixed dir exits 0" test $rc = 0
    check "truncated file is named" has "$tmp/err" "truncated.json"
    check "garbage file is counted, not listed" has "$tmp/err" \
        "1 file skipped, not recognized by any plugin (.*); -v lists them"
    check "... and recorded on its input" has "$tmp/out" "garbage.bin"
    run analyze -v --format json "$tmp/mixed"
    check "-v names the garbage file" has "$tmp/err" "garbage.bin: warning: not recognized"
    check "hidden dir is skipped" test "$(grep -c secret "$tmp/err")" = 0
    check "good file still analyzed" has "$tmp/out" '"plugin": "flink"'

    run normalize --format json "$flink_fixture"
    cp "$tmp/out" "$tmp/norm.json"
    check "normalize exits 0" test $rc = 0
    check "normalize is JSON" json_ok "$tmp/norm.json"
    check "normalize shows nodes" has "$tmp/norm.json" '"nodes"'

    cat "$flink_fixture" | "$bin" analyze - >"$tmp/out" 2>"$tmp/err"
    check "stdin input works" test $? = 0

    # User rules: one good, one hostile, one broken; the good one still runs.
    mkdir -p "$tmp/rules"
    cat >"$tmp/rules/good.lua" <<'EOF'
return {
  id = "team.every-run", title = "Says hello to every run", severity = "info",
  sources = { "*" },
  check = function(bundle, ctx)
    for _, run in ipairs(bundle.runs) do
      ctx.report { run = run, message = "hello " .. run.source .. " run" }
    end
  end,
}
EOF
    cat >"$tmp/rules/loop.lua" <<'EOF'
return { id = "team.loop", title = "Loops", severity = "info", sources = { "flink" },
  check = function(run, ctx) while true do end end }
EOF
    printf 'return { id = "team.broken", ' >"$tmp/rules/broken.lua"
    run analyze --format json --rules "$tmp/rules" --rule-instructions 100000 "$flink_fixture"
    cp "$tmp/out" "$tmp/user.json"
    check "user rules: a rule error exits 5" test $rc = 5
    check "user rules: good rule reports" has "$tmp/user.json" "hello flink run"
    check "user rules: loop is stopped" has "$tmp/user.json" "instruction budget exceeded"
    check "user rules: broken file named" has "$tmp/user.json" "broken.lua"
    check "user rules: json still valid" json_ok "$tmp/user.json"
fi

run rules list
check "rules list exits 0" test $rc = 0
if [ -n "$flink_fixture" ]; then
    check "rules list shows flink.bottleneck" has "$tmp/out" "flink.bottleneck"
    run rules show flink.bottleneck
    check "rules show exits 0" test $rc = 0
    check "rules show prints options" has "$tmp/out" "options:"
fi
run rules show no.such.rule
check "rules show unknown exits 2" test $rc = 2

run plugins list
check "plugins list exits 0" test $rc = 0
check "plugins list shows built-ins" has "$tmp/out" "built-in"

csv_so="$(dirname "$bin")/plugins/optipipe-csv.so"
if [ -f "$csv_so" ] && [ -f "$src/fixtures/csv/tasks.csv" ]; then
    run plugins list --plugin-path "$(dirname "$csv_so")"
    check "external plugin listed" has "$tmp/out" "csv"
    OPTIPIPE_PLUGIN_PATH="$(dirname "$csv_so")" "$bin" normalize "$src/fixtures/csv/tasks.csv" >"$tmp/out" 2>"$tmp/err"
    check "external plugin reads its format" has "$tmp/out" '"source": "csv"'
fi

finish
