#!/usr/bin/env bash
# Engine overhead benchmark (not a test): 50 generated rules over one Flink
# job of 5,000 vertices, in-process and isolated (forked worker), against the
# same analysis with no rules. Prints wall-clock medians of 5 runs.
# Usage: tests/bench/engine.sh [build/optipipe]
set -euo pipefail
bin=${1:-build/optipipe}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_engine_bundle.py" "$tmp" 5000 50
mkdir -p "$tmp/none"

# rules_ms from the JSON report: loading and running the rules, validating
# and sorting findings (parsing is reported apart as read_ms)
rules_ms() { # median over 5 runs
    local t=()
    for _ in 1 2 3 4 5; do
        t+=($("$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["rules_ms"])'))
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
}

common=(analyze --no-bundled --format json "$tmp/bundle.json")
none=$(rules_ms "$bin" "${common[@]}" --rules "$tmp/none")
inproc=$(rules_ms "$bin" "${common[@]}" --rules "$tmp/rules" --isolate never)
iso=$(rules_ms "$bin" "${common[@]}" --rules "$tmp/rules" --isolate always)
echo "50 rules over one run of 5,000 nodes; rules_ms, median of 5 runs"
echo "  no rules:                          ${none} ms"
echo "  50 rules in-process (--isolate never):  ${inproc} ms"
echo "  50 rules in a forked worker (--isolate always): ${iso} ms"
