#!/usr/bin/env bash
# run.sh TARGET SECONDS [BUILD_DIR] - runs one libFuzzer target (stream,
# spark, flink, dbt, config, rules, rule_test, multipart, http) for SECONDS on one core, seeded from
# fixtures/ (seeds.py) plus the corpus earlier runs left in BUILD_DIR.
# BUILD_DIR (default: build-fuzz) is configured with
#   CC=clang cmake -DOP_FUZZ=ON -DOP_SANITIZE=ON
# A crash leaves its input in BUILD_DIR/fuzz/artifacts-TARGET/ and makes
# this script fail; turn it into a regression test (tests/bad-inputs/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${1:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
secs=${2:?usage: run.sh TARGET SECONDS [BUILD_DIR]}
build=$(cd "${3:-$root/build-fuzz}" && pwd)
exe=$build/fuzz/fuzz_$target
[ -x "$exe" ] || { echo "run.sh: $exe not built (cmake -DOP_FUZZ=ON)" >&2; exit 2; }

work=$build/fuzz
seeds=$work/seeds-$target
corpus=$work/corpus-$target
art=$work/artifacts-$target
rm -rf "$seeds"
mkdir -p "$corpus" "$art"
OPTIPIPE=$build/optipipe python3 "$here/seeds.py" "$target" "$seeds"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# -rss_limit_mb and -malloc_limit_mb make a decompression bomb that the
# input caps fail to stop a finding instead of a swapping machine.
status=0
(cd "$work" && "$exe" -max_total_time="$secs" -rss_limit_mb=1024 -malloc_limit_mb=512 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$art/" \
    "$corpus" "$seeds") >"$work/log-$target.txt" 2>&1 || status=$?
tail -n 12 "$work/log-$target.txt" | grep -E "stat::number_of_executed_units|stat::peak_rss|Done|SUMMARY|ERROR" || true
if [ "$status" != 0 ]; then
    echo "run.sh: fuzz_$target FAILED (exit $status); log: $work/log-$target.txt; inputs:" >&2
    ls -1 "$art" >&2
    exit 1
fi
echo "run.sh: fuzz_$target ran ${secs}s clean ($(ls "$corpus" | wc -l) corpus files)"
