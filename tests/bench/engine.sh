#!/usr/bin/env bash
# Engine overhead benchmark (not a test): 50 generated rules over one Flink
# job of 5,000 vertices, in-process and isolated (forked worker), against the
# same analysis with no rules, and against the same rule files run by the
# stand-alone Lua interpreter over plain tables (no sandbox, no limits): the
# difference is the engine's own overhead. Prints rules_ms, median and
# minimum of 5 rounds; each round runs every case once, so that all cases
# see the same load on a shared machine. Numbers and their analysis:
# docs/sandbox.md "Performance". The base case runs one empty rule (a
# folder without rules is an error). Environment (smaller in the suite's
# smoke run, tests/bench/smoke.sh): VERTICES (5000), RULES (50), ROUNDS (5).
# Usage: tests/bench/engine.sh [build/optipipe]
set -euo pipefail
bin=${1:-build/optipipe}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vertices=${VERTICES:-5000} nrules=${RULES:-50} rounds=${ROUNDS:-5}
python3 "$here/gen_engine_bundle.py" "$tmp" "$vertices" "$nrules"
mkdir -p "$tmp/none"
cat >"$tmp/none/empty.lua" <<'LUA'
return { id = "bench.empty", title = "Nothing", severity = "info", sources = { "flink" },
         check = function(run, ctx) end }
LUA
lua=$(command -v lua5.4 || true)

# rules_ms from the JSON report: loading and running the rules, validating
# and sorting findings (parsing is reported apart as read_ms)
rules_ms() {
    "$bin" analyze --no-bundled --format json "$tmp/bundle.json" "$@" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["rules_ms"])'
}

if [ -n "$lua" ]; then
    "$bin" normalize --format json "$tmp/bundle.json" >"$tmp/model.json"
    python3 "$here/model_to_lua.py" "$tmp/model.json" "$tmp/model.lua"
fi
for _ in $(seq "$rounds"); do
    rules_ms --rules "$tmp/none" >>"$tmp/none.ms"
    rules_ms --rules "$tmp/rules" --isolate never >>"$tmp/inproc.ms"
    rules_ms --rules "$tmp/rules" --isolate always >>"$tmp/worker.ms"
    rules_ms --rules "$tmp/rules" --isolate never --rule-instructions 0 \
        --rule-timeout-ms 0 >>"$tmp/nolimits.ms"
    if [ -n "$lua" ]; then
        "$lua" "$here/plain_rules.lua" "$tmp/model.lua" "$tmp"/rules/*.lua >>"$tmp/plain.ms"
    fi
done

# "median ms (min ms)" of the numbers in a file
stats() { sort -n "$1" | awk '{v[NR] = $1} END {printf "%s ms (min %s ms)", v[int((NR + 1) / 2)], v[1]}'; }

echo "$nrules rules over one run of $vertices nodes; rules_ms, median of $rounds rounds"
echo "  one empty rule:                              $(stats "$tmp/none.ms")"
echo "  in-process (--isolate never):                $(stats "$tmp/inproc.ms")"
echo "  forked worker (--isolate always):            $(stats "$tmp/worker.ms")"
echo "  in-process, no instruction or time limit:    $(stats "$tmp/nolimits.ms")"
if [ -n "$lua" ]; then
    echo "  reference: plain lua5.4 over plain tables:   $(stats "$tmp/plain.ms") (CPU)"
else
    echo "  reference: lua5.4 not found, skipped"
fi
