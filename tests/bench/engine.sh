#!/usr/bin/env bash
# Engine overhead benchmark (not a test): 50 generated rules over one Flink
# job of 5,000 vertices, in-process and isolated (forked worker), against the
# same analysis with no rules, and against the same rule files run by the
# stand-alone Lua interpreter over plain tables (no sandbox, no limits): the
# difference is the engine's own overhead. Prints rules_ms (median and
# minimum of 5 runs; the machine is shared, so the minimum is the steadier
# figure). Numbers and their analysis: docs/sandbox.md "Performance".
# Usage: tests/bench/engine.sh [build/optipipe]
set -euo pipefail
bin=${1:-build/optipipe}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_engine_bundle.py" "$tmp" 5000 50
mkdir -p "$tmp/none"

# "median min" of five numbers, one per line
stats() { sort -n | awk '{v[NR] = $1} END {printf "%s ms (min %s ms)", v[3], v[1]}'; }

# rules_ms from the JSON report: loading and running the rules, validating
# and sorting findings (parsing is reported apart as read_ms)
rules_ms() {
    for _ in 1 2 3 4 5; do
        "$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["rules_ms"])'
    done | stats
}

common=(analyze --no-bundled --format json "$tmp/bundle.json")
rules=(--rules "$tmp/rules")
echo "50 rules over one run of 5,000 nodes; rules_ms, median of 5 runs"
echo "  no rules:                                   $(rules_ms "$bin" "${common[@]}" --rules "$tmp/none")"
echo "  in-process (--isolate never):               $(rules_ms "$bin" "${common[@]}" "${rules[@]}" --isolate never)"
echo "  forked worker (--isolate always):           $(rules_ms "$bin" "${common[@]}" "${rules[@]}" --isolate always)"
echo "  in-process, no instruction or time limit:   $(rules_ms "$bin" "${common[@]}" "${rules[@]}" --isolate never --rule-instructions 0 --rule-timeout-ms 0)"

lua=$(command -v lua5.4 || true)
if [ -n "$lua" ]; then
    "$bin" normalize --format json "$tmp/bundle.json" >"$tmp/model.json"
    python3 "$here/model_to_lua.py" "$tmp/model.json" "$tmp/model.lua"
    plain=$(for _ in 1 2 3 4 5; do "$lua" "$here/plain_rules.lua" "$tmp/model.lua" "$tmp"/rules/*.lua; done | stats)
    echo "  reference: plain lua5.4, plain tables (CPU): $plain"
else
    echo "  reference: lua5.4 not found, skipped"
fi
