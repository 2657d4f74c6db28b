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

median_ms() { # median wall ms of 5 runs of the command
    local t=()
    for _ in 1 2 3 4 5; do
        local s e
        s=$(date +%s%N)
        "$@" >/dev/null 2>&1 || true
        e=$(date +%s%N)
        t+=($(( (e - s) / 1000000 )))
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
}

parse=$(median_ms "$bin" analyze --no-bundled --rules "$tmp/none" --format json "$tmp/bundle.json")
inproc=$(median_ms "$bin" analyze --no-bundled --rules "$tmp/rules" --isolate never --format json "$tmp/bundle.json")
iso=$(median_ms "$bin" analyze --no-bundled --rules "$tmp/rules" --isolate always --format json "$tmp/bundle.json")
echo "5,000 nodes; wall-clock medians of 5 runs"
echo "  parse only (no rules):                      ${parse} ms"
echo "  + 50 rules in-process (--isolate never):    ${inproc} ms  (engine overhead $((inproc - parse)) ms)"
echo "  + 50 rules in a forked worker (--isolate always): ${iso} ms  (engine overhead $((iso - parse)) ms)"
