#!/usr/bin/env bash
# The run store benchmark (docs/performance.md#history; not a ctest test):
# dbt, 10 000 models x 30 nightly runs. Compares analyzing the 31st night
# (a) with its 30 predecessors from the run store against (b) passing the
# 31 run_results together; times recording one run against the same
# analysis without a store; reports the store's bytes per run per node.
# Timings: median of RUNS (3) with /usr/bin/time (wall s, peak RSS).
# Usage: tests/bench/history_bench.sh build/optipipe [WORKDIR] [MODELS]
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-/tmp/optipipe-history-bench}
models=${3:-10000}
here=$(cd "$(dirname "$0")" && pwd)
# The rule budget is raised for both sides: at 10 000 models x 30 runs
# dbt.regression needs more than the default 2 s per rule call either way.
common="-q --no-config --no-baseline --pack dbt --rule-timeout-ms 120000 --allow-rule-errors"
mkdir -p "$work"
cd "$work"
[ -f data/manifest.json ] || python3 "$here/gen_dbt_history.py" data --models "$models"
if [ ! -f full.db ]; then
    for d in $(seq -w 1 30); do
        "$bin" analyze $common --history full.db "data/run_results-2024-05-$d.json" >/dev/null 2>&1
    done
fi
runs=${RUNS:-3} # 1 in the suite's smoke run (tests/bench/smoke.sh)
measure() { # measure LABEL SETUP COMMAND...: median wall s and RSS of $runs runs
    local label=$1 setup=$2 i
    shift 2
    for i in $(seq "$runs"); do
        eval "$setup"
        /usr/bin/time -f "%e %M" -o t.$i "$@" >/dev/null 2>&1 || true
    done
    for i in $(seq "$runs"); do cat "t.$i"; done | sort -n | sed -n "$(((runs + 1) / 2))p" | {
        read -r s kb
        printf '%-44s %7.2f s %8.1f MiB\n' "$label" "$s" "$(echo "$kb / 1024" | bc -l)"
        echo "$s $kb" >"res.$label"
    }
}
last="data/run_results-2024-05-31.json data/manifest.json"
measure store "cp full.db s.db; rm -f s.db-wal s.db-shm" "$bin" analyze $common --history s.db $last
measure together ":" "$bin" analyze $common data
measure alone ":" "$bin" analyze $common $last
measure record "rm -f r.db*" "$bin" analyze $common --history r.db $last
read -r ts tk <res.store
read -r fs fk <res.together
read -r as ak <res.alone
read -r rs rk <res.record
echo "store vs together: $(echo "$fs / $ts" | bc -l | cut -c1-5)x faster (target >= 5), RSS $(echo "$tk / $fk" | bc -l | cut -c1-5) of it (target <= 0.25)"
echo "recording one run adds $(echo "($rs - $as) * 100 / $as" | bc -l | cut -c1-5) % (target <= 10)"
size=$(stat -c %s full.db)
echo "store: $size bytes for 30 runs x $models nodes = $(echo "$size / 30 / $models" | bc) bytes per run per node"
