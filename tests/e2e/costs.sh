#!/usr/bin/env bash
# Money (docs/costs.md) on the demo bundle: without `costs` in the config
# no finding is priced and the report is the golden one; with a team's
# rates the dbt and Spark findings carry estimated_savings, the JSON has
# the totals per run and job, the text report says them, "Start here"
# ranks by money, and a mistyped rate is a usage error naming the known
# keys.
# Usage: costs.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
cd "$src" || exit 1
unset OPTIPIPE_DOCS_URL

cat >"$tmp/optipipe.lua" <<'LUA'
return { costs = { bigquery = { per_tib = 6.25 },
                   spark = { per_core_hour = 0.05, per_gib_hour = 0.005 } } }
LUA
cat >"$tmp/typo.lua" <<'LUA'
return { costs = { bigquery = { per_tb = 6.25 } } }
LUA
cat >"$tmp/none.lua" <<'LUA'
return { }
LUA

run() { # run CONFIG FORMAT OUT
    "$bin" analyze --deterministic --no-baseline --config "$1" --format "$2" fixtures/demo \
        >"$3" 2>"$E2E_ERR"
    [ $? -le 1 ]
}
check "without rates" run "$tmp/none.lua" json "$tmp/none.json"
check "with rates" run "$tmp/optipipe.lua" json "$tmp/rates.json"
E2E_OUT=$tmp/rates.json
py() { python3 - "$tmp/none.json" "$tmp/rates.json" "$@"; }
check "without rates nothing is priced" py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if "savings" not in d and not any("estimated_savings" in (f.get("impact") or {})
                                            for f in d["findings"]) else 1)
PY
check "with rates the dbt regression and the Spark skew are priced" py <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
priced = {f["rule"] for f in d["findings"] if "estimated_savings" in (f.get("impact") or {})}
ok = {"dbt.regression", "spark.skew"} <= priced
ok &= all(f["impact"]["currency"] == "USD" and f["impact"]["cost_basis"]
          for f in d["findings"] if "estimated_savings" in (f.get("impact") or {}))
sys.exit(0 if ok else 1)
PY
check "totals per run and per job, the build counted once" py <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
s = d["savings"]
jobs = {j["job"]: j for j in s["by_job"]}
node = [f for f in d["findings"] if f["rule"] == "dbt.regression" and f["node"]][0]
ok = (abs(jobs["shop/build"]["estimated_savings"] - node["impact"]["estimated_savings"]) < 1e-9
      and "nightly-orders" in jobs
      and abs(s["total"] - sum(r["estimated_savings"] for r in s["by_run"])) < 1e-9)
sys.exit(0 if ok else 1)
PY
check "the findings themselves are the same" py <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if [f["fingerprint"] for f in a["findings"]] == [f["fingerprint"] for f in b["findings"]] else 1)
PY
check "text without rates: the golden report" run "$tmp/none.lua" text "$tmp/none.txt"
E2E_OUT=$tmp/none.txt
check "  no money in it" sh -c '! grep -q "saves\|savings" "$1"' _ "$tmp/none.txt"
check "text with rates" run "$tmp/optipipe.lua" text "$tmp/rates.txt"
E2E_OUT=$tmp/rates.txt
check "  a finding says what it saves" grep -q '^    saves: about \$[0-9.]* a run' "$tmp/rates.txt"
check "  the run's total" grep -q '^  estimated savings: \$[0-9.]* a run across 1 finding' "$tmp/rates.txt"
check "  the totals by job" grep -q '^Estimated savings by job' "$tmp/rates.txt"
check "  Start here: the most money first" sh -c \
    'sed -n "/^Start here:/,/^$/p" "$1" | grep -m1 "^  1\." | grep -q "dbt.regression.*saves about"' \
    _ "$tmp/rates.txt"
"$bin" analyze --config "$tmp/typo.lua" fixtures/demo >/dev/null 2>"$tmp/typo.err"
code=$?
E2E_OUT=$tmp/typo.err
check "a mistyped rate: usage error (2)" test "$code" = 2
check "  naming the known keys" grep -q 'costs.bigquery.per_tb: unknown rate (known: .*bigquery.per_tib' "$tmp/typo.err"
finish
