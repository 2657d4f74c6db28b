#!/usr/bin/env bash
# Hostile rule packs against the whole CLI (docs/sandbox.md): evidence and
# options built as a shared DAG, too many values, test files and packs that
# stall (in Lua and inside a C function) under `rules test` and `rules
# lint`, the per-pack time budget (CLI and config), each file loaded once
# per process, symlinks out of the pack (rule files, modules, test files),
# and log lines forged with newlines.
# Outcomes never depend on speed: the loops never end, and only the limit
# under test is set (--rule-instructions 0 where a time limit decides). Memory is bounded with ulimit -v (skipped under ASan).
# Usage: hostile_packs.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=out
E2E_ERR=err
cd "$tmp" || exit 1
flink=$src/fixtures/demo/flink-window-bottleneck.json
# op ARGS: optipipe with 1 GiB of address space (a DAG report took 1 GB)
op() {
    (
        if [ "${OP_SANITIZE:-0}" != 1 ] && [ "${OP_SANITIZE:-}" != ON ]; then
            ulimit -v $((1024 * 1024))
        fi
        exec timeout 120 "$bin" "$@"
    ) >out 2>err
    rc=$?
}
rule() { # rule FILE ID BODY-OF-CHECK [TOP-LEVEL-CODE]
    mkdir -p "$(dirname "$1")"
    cat >"$1" <<EOF
${4:-}
return { id = "$2", title = "$2", severity = "info", sources = {"*"},
  check = function(run, ctx) $3 end }
EOF
}
err_has() { # err_has RULE PATTERN: the rule's error in the JSON report (out)
    python3 -c 'import json,re,sys
errs = [e["error"] for e in json.load(open("out")).get("rule_errors", [])
        if e["rule"] == sys.argv[1]]
sys.exit(not any(re.search(sys.argv[2], e) for e in errs))' "$1" "$2"
}
count() { grep -c -- "$2" "$1"; } # count FILE PATTERN: matching lines

# --- values that are no trees, or too big ---------------------------------
rule dag/dag.lua hostile.dag \
    'local t = {} for i = 1, 20 do t = {t, t} end ctx.report{message = "x", evidence = {d = t}}'
rule dag/wide.lua hostile.wide \
    'local t = {} for i = 1, 300000 do t[i] = {} end ctx.report{message = "x", evidence = {d = t}}'
rule dag/cycle.lua hostile.cycle \
    'local t = {} t.self = t ctx.report{message = "x", evidence = t}'
rule dag/shared_ok.lua hostile.shared_ok \
    'local t = {a = 1} ctx.report{message = "one", evidence = t} ctx.report{message = "two", evidence = t}'
cat >dag/dagopt.lua <<'EOF'
local t = {}
for i = 1, 20 do t = {t, t} end
return { id = "hostile.dagopt", title = "dag options", severity = "info",
  sources = {"*"}, options = { d = t }, check = function() end }
EOF
op analyze --rule-timeout-ms 0 --no-bundled --rules dag --format json "$flink" # only the value limits decide
check "DAG packs: analyze ends normally (exit 5: dagopt does not load)" test $rc = 5
check "... the report is small" test "$(wc -c <out)" -lt 200000
check "DAG evidence is a rule error naming the rule" \
    err_has hostile.dag "ctx.report: evidence.d\[1\].*: the same table is used twice"
check "a cycle too" err_has hostile.cycle "evidence.self: the same table is used twice"
check "300,000 values exceed the node cap" err_has hostile.wide "more than 200000 values"
check "DAG options: a load error naming the rule" err_has hostile.dagopt "options.d.*the same table is used twice"
check "one table in two separate reports is fine" \
    python3 -c 'import json,sys
d = json.load(open("out"))
assert sum(f["rule"] == "hostile.shared_ok" for f in d["findings"]) == 2'

# --- rules test: test files that stall or are DAGs ---------------------------
mkdir -p tstall tcstall tdag
echo 'while true do end' >tstall/x_test.lua
cat >tcstall/x_test.lua <<'EOF'
string.find(("a"):rep(40), ("a?"):rep(40) .. ("a"):rep(40)) -- days in C
return { rule = "x", cases = {} }
EOF
cat >tdag/x_test.lua <<'EOF'
local t = {}
for i = 1, 22 do t = {t, t} end
return { rule = "x", cases = { t } }
EOF
for d in tstall tcstall; do
    op rules test --rule-instructions 0 --rule-timeout-ms 200 $d
    check "rules test $d: fails" test $rc = 1
    check "... with a timeout naming the file" has out "FAIL $d/x_test.lua: $d/x_test.lua: timeout"
done
op rules test tdag
check "rules test: a DAG test file is refused" has out "FAIL tdag/x_test.lua: .*the same table is used twice"
op rules test --isolate never --rule-instructions 0 --rule-timeout-ms 200 tstall
check "... in-process too, under the limits" has out "tstall/x_test.lua: timeout"

# --- rules lint: packs that stall at load ---------------------------------------
mkdir -p lstall
printf 'string.find(("a"):rep(40), ("a?"):rep(40) .. ("a"):rep(40))\nreturn {}\n' >lstall/a.lua
echo 'while true do end' >lstall/b.lua
op rules lint --rule-instructions 0 --rule-timeout-ms 200 lstall
check "rules lint on a stalling pack: problems, not a hang" test $rc = 1
check "... the C stall ends as a timeout" has out "lstall/a.lua: does not load: timeout"
check "... so does the Lua loop" has out "lstall/b.lua: does not load: timeout"

# --- the per-pack budget and one load per file and process --------------------------
mkdir -p budget
for i in 1 2 3 4 5; do
    printf 'print("load r%s")\nwhile true do end\n' $i >"budget/r$i.lua"
done
n_errors() { python3 -c 'import json; print(len(json.load(open("out"))["rule_errors"]))'; }
budget_ok() { # five errors; r4 and r5 (after >= 300 ms of timeouts) never load
    [ "$(n_errors)" = 5 ] &&
        err_has budget/r4.lua "^pack time budget exceeded$" &&
        err_has budget/r5.lua "^pack time budget exceeded$" &&
        ! has err "load r4" && ! has err "load r5" &&
        for i in 1 2 3; do [ "$(count err "load r$i\$")" -le 1 ] || return 1; done
}
op analyze --format json --no-bundled --rules budget --rule-instructions 0 --rule-timeout-ms 100 --rule-pack-timeout-ms 250 "$flink"
check "pack budget (CLI): later files are not loaded, each file at most once" budget_ok
echo 'return { rule_pack_timeout_ms = 250 }' >budget.lua
op analyze --format json --config budget.lua --no-bundled --rules budget --rule-instructions 0 --rule-timeout-ms 100 "$flink"
check "pack budget (config key rule_pack_timeout_ms)" budget_ok
op analyze --format json --config budget.lua --rule-pack-timeout-ms 0 --no-bundled --rules budget --rule-instructions 0 --rule-timeout-ms 100 "$flink"
check "the CLI beats the config (0: no budget, five timeouts)" \
    test "$(n_errors)" = 5 -a "$(grep -c '"error": "timeout"' out)" = 5
echo 'return { rule_pack_timeout_ms = "soon" }' >badbudget.lua
op analyze --config badbudget.lua --no-bundled "$flink"
check "a bad rule_pack_timeout_ms is a config error" has err "rule_pack_timeout_ms: expected a whole number"

for i in 1 2; do
    rule "once/r$i.lua" "once.r$i" "ctx.report{message = \"r$i\"}" "print(\"load r$i\")"
    cat >"once/r${i}_test.lua" <<EOF
return { rule = "once.r$i", cases = {
  { name = "a", inputs = { "$flink" }, expect = { { message = "r$i" } } },
  { name = "b", inputs = { "$flink" }, expect = { { message = "r$i" } } } } }
EOF
done
cat >once/spark_only.lua <<'EOF'
print("load spark_only")
return { id = "once.spark", title = "s", severity = "info", sources = {"spark"},
  check = function() end }
EOF
op rules test --isolate never once
check "rules test: 4 cases pass" has out "4 passed, 0 failed"
check "... in one process each file is loaded once" \
    test "$(count err 'load r1$')" = 1 -a "$(count err 'load r2$')" = 1 -a "$(count err 'load spark_only$')" = 1
op rules lint once
check "rules lint loads each file once" test "$(count err 'load r1$')" = 1
op analyze --no-bundled --rules once --isolate never "$flink"
check "analyze in-process: once" test "$(count err 'load r1$')" = 1
op analyze --no-bundled --rules once "$flink"
check "analyze isolated: once in the load worker, once in the run worker" \
    test "$(count err 'load r1$')" = 2
check "... and a rule with nothing to run is not reloaded" test "$(count err 'load spark_only$')" = 1

# --- symlinks out of the pack ---------------------------------------------------------
mkdir -p outside link/lib
echo 'return { secret = "TOPSECRET-1234" }' >outside/cfg.lua
echo 'syntax error TOPSECRET-5678' >outside/rule.lua
ln -s "$tmp/outside/cfg.lua" link/lib/cfg.lua
echo 'return { ok = "inside-ok" }' >link/lib/real.lua
ln -s real.lua link/lib/inner.lua
ln -s "$tmp/outside/rule.lua" link/leak.lua
rule link/a.lua hostile.outlink 'ctx.report{message = require("cfg").secret}'
rule link/b.lua hostile.inlink 'ctx.report{message = require("inner").ok}'
op analyze --no-bundled --rules link --format json "$flink"
check "a lib/ symlink out of the pack is refused, naming the file" \
    err_has hostile.outlink "module 'cfg': link/lib/cfg.lua: refused: the file lies outside the pack folder"
check "a rule file linked out of the pack is refused" err_has link/leak.lua "^link/leak.lua: refused: the file lies outside"
check "... nothing of either file leaks" sh -c '! grep -q TOPSECRET out err'
check "a symlink inside the pack works" has out '"message": "inside-ok"'
mkdir -p tlink
echo 'local x = TOPSECRET-9999 syntax' >outside/t.lua
ln -s "$tmp/outside/t.lua" tlink/x_test.lua
op rules test tlink
check "rules test: a test file linked out of the pack is refused" \
    has out "FAIL tlink/x_test.lua: tlink/x_test.lua: refused: the file lies outside the folder tlink"
check "... without a piece of it" sh -c '! grep -q TOPSECRET out err'

# --- print and ctx.log: one call, one line --------------------------------------
rule logp/p.lua hostile.log \
    'print("one\noptipipe: forged\r\nline") ctx.log("two\n[x] forged\xc2\x85\xe2\x80\xa8end")'
op analyze --no-bundled --rules logp "$flink"
check "print with newlines is one line" has err '^\[hostile.log\] one?optipipe: forged??line$'
check "ctx.log too (also NEL and U+2028)" has err '^\[hostile.log\] two?\[x\] forged??end$'
check "no forged line" sh -c '! grep -q "^optipipe: forged\|^\[x\] forged" err'

finish
