#!/usr/bin/env bash
# smoke.sh NAME OPTIPIPE SOURCE_DIR - runs tests/bench/NAME.sh in its smoke
# mode (ctest bench/NAME, label bench): the smallest sizes and one round,
# in a fresh work folder. It checks that the benchmark still runs to its
# end and prints its table; no number it prints is asserted (timings are
# measured by hand: docs/performance.md).
set -u
name=$1
bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
src=$3
here=$src/tests/bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tool in python3 bc /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
case $name in
engine) export VERTICES=200 RULES=5 ROUNDS=1; set -- "$bin" ;;
history_bench) export RUNS=1; set -- "$bin" "$work" 40 ;;
json_memory) export MB=1; set -- "$bin" "$work" ;;
serve_bench) export WORKERS=1; set -- "$bin" "$work/serve" 1 1 1 ;;
serve_multi_bench) export WORKERS=1; set -- "$bin" "$work/multi" 2 1 1 ;;
spark_bench) export SMALL=1M BIG=2M RUNS=1 SKIP_JQ=1; set -- "$bin" "$work" ;;
spark_stages) export STAGES=2000; set -- "$bin" "$work" ;;
store_pg_bench) export RUNS=1; set -- "$bin" "$work" 40 ;;
*) echo "smoke.sh: no smoke mode for $name (add one here)"; exit 1 ;;
esac
export BENCH_SMOKE=1
bash "$here/$name.sh" "$@" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
if [ "$rc" = 77 ]; then # it said why (no PostgreSQL, ...)
    tail -3 "$work/err"
    exit 77
fi
if [ "$rc" != 0 ] || [ ! -s "$work/out" ]; then
    echo "FAIL: tests/bench/$name.sh exited $rc in smoke mode"
    tail -20 "$work/err"
    exit 1
fi
echo "bench/$name: ran to its end (smoke mode; numbers not checked)"
