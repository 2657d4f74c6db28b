#!/usr/bin/env bash
# A severity set in optipipe.lua applies to every finding of the rule, also
# to those the rule reports with a severity of its own (spark.critical-path
# reports `warning` explicitly; before, the config's "info" did not demote
# it while it did for rules that leave the severity to their declaration).
# Usage: config_severity.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
demo=$src/fixtures/demo
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }

op analyze --no-config --deterministic "$demo"
check "without a config: spark.critical-path is a warning" has "$tmp/out" "^  warning spark.critical-path"
check "without a config: dbt.regression is a warning" has "$tmp/out" "^  warning dbt.regression"

cat >"$tmp/optipipe.lua" <<'LUA'
return { rules = {
  ["spark.critical-path"] = "info",
  ["dbt.regression"] = { severity = "error" },
} }
LUA
op analyze --config "$tmp/optipipe.lua" --deterministic "$demo"
check "config \"info\" demotes a rule that reports its own severity" has "$tmp/out" "^  info    spark.critical-path"
check "... no warning of it is left" bash -c "! grep -q '^  warning spark.critical-path' '$tmp/out'"
check "config severity = \"error\" raises every finding of the rule" bash -c \
    "[ \$(grep -c '^  error   dbt.regression' '$tmp/out') = 2 ]"
op analyze --config "$tmp/optipipe.lua" --format json "$demo"
check "JSON carries the configured severity" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cp = [f for f in d["findings"] if f["rule"] == "spark.critical-path"]
rg = [f for f in d["findings"] if f["rule"] == "dbt.regression"]
assert cp and all(f["severity"] == "info" for f in cp), cp
assert rg and all(f["severity"] == "error" for f in rg), rg' "$tmp/out"
finish
