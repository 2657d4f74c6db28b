#!/usr/bin/env bash
# The PostgreSQL run store against the SQLite one (docs/performance.md
# "PostgreSQL store"; issue 29): dbt, MODELS models (10 000) x 30 nightly
# runs recorded into each, then, median of RUNS (3) with /usr/bin/time:
#   record   analyze the 31st night with --history (its 30 predecessors
#            read by ctx.history, the run recorded: 10 000 node rows)
#   alone    the same analysis without a store (what the store adds is
#            record - alone)
#   read     history runs JOB --limit 30 --format json (30 runs read back)
#   show     history show JOB@latest --format json (one run, its findings)
# Target: PostgreSQL within 2x of SQLite for record - alone and for read.
# The server is a throw-away one (tests/lib/pg.sh) with fsync on
# (OPTIPIPE_PG_DURABLE=1), on this machine, over loopback TCP.
# Usage: tests/bench/store_pg_bench.sh build/optipipe [WORKDIR] [MODELS]
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-/tmp/optipipe-store-pg-bench}
models=${3:-10000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/pg.sh"
if "$bin" history --history postgresql://nobody@127.0.0.1:1/x jobs 2>&1 |
    grep -q "not compiled in"; then
    echo "SKIP: this optipipe is built without PostgreSQL support" >&2
    exit 77
fi
export OPTIPIPE_PG_DURABLE=1
set +e
pg_start
rc=$?
set -e
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "store_pg_bench: the PostgreSQL server did not start" >&2; exit 1; }
trap pg_stop EXIT
common="-q --no-config --no-baseline --pack dbt --rule-timeout-ms 120000 --allow-rule-errors"
mkdir -p "$work"
cd "$work"
[ -f data/manifest.json ] || python3 "$here/gen_dbt_history.py" data --models "$models"
pg=$(pg_createdb bench)
rm -f full.db*
fill_s=$(date +%s.%N)
for d in $(seq -w 1 30); do
    "$bin" analyze $common --history full.db "data/run_results-2024-05-$d.json" >/dev/null 2>&1
done
fill_m=$(date +%s.%N)
for d in $(seq -w 1 30); do
    "$bin" analyze $common --history "$pg" "data/run_results-2024-05-$d.json" >/dev/null 2>&1
done
fill_e=$(date +%s.%N)
job=$("$bin" history --history full.db jobs --format json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["job"])')
runs=${RUNS:-3} # 1 in the suite's smoke run (tests/bench/smoke.sh)
measure() { # measure LABEL COMMAND...: median wall s of $runs runs
    local label=$1 i
    shift
    for i in $(seq "$runs"); do
        /usr/bin/time -f "%e %M" -o t.$i "$@" >/dev/null 2>&1 || true
    done
    for i in $(seq "$runs"); do cat "t.$i"; done | sort -n | sed -n "$(((runs + 1) / 2))p" | {
        read -r s kb
        printf '%-28s %7.2f s %8.1f MiB\n' "$label" "$s" "$(echo "$kb / 1024" | bc -l)"
        echo "$s" >"res.$label"
    }
}
last="data/run_results-2024-05-31.json data/manifest.json"
measure alone "$bin" analyze $common $last
for b in sqlite pg; do
    s=full.db
    [ $b = pg ] && s=$pg
    measure "record.$b" "$bin" analyze $common --history "$s" $last
    measure "read.$b" "$bin" history --history "$s" runs "$job" --limit 30 --format json
    measure "show.$b" "$bin" history --history "$s" show "$job@latest" --format json
done
r() { cat "res.$1"; }
ratio() { echo "$1 / $2" | bc -l | cut -c1-5; }
rec_sq=$(echo "$(r record.sqlite) - $(r alone)" | bc -l)
rec_pg=$(echo "$(r record.pg) - $(r alone)" | bc -l)
printf 'filling 30 runs x %s models: SQLite %.1f s, PostgreSQL %.1f s\n' "$models" \
    "$(echo "$fill_m - $fill_s" | bc -l)" "$(echo "$fill_e - $fill_m" | bc -l)"
printf 'the store adds (record - alone): SQLite %.2f s, PostgreSQL %.2f s\n' "$rec_sq" "$rec_pg"
if [ "$(echo "$rec_sq > 0.05" | bc -l)" = 1 ]; then
    echo "PostgreSQL / SQLite, the store's share: $(ratio "$rec_pg" "$rec_sq")x (target <= 2)"
fi
echo "PostgreSQL / SQLite, the whole analysis: $(ratio "$(r record.pg)" "$(r record.sqlite)")x"
echo "PostgreSQL / SQLite, history runs: $(ratio "$(r read.pg)" "$(r read.sqlite)")x (target <= 2)"
echo "PostgreSQL / SQLite, history show: $(ratio "$(r show.pg)" "$(r show.sqlite)")x"
