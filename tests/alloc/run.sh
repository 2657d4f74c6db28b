#!/usr/bin/env bash
# run.sh ALLOC_FAIL_EXE OPTIPIPE_HOME [SAMPLES [PREFIX [RUNS]]] - runs the
# demo analysis once without failures to count its allocations, then once
# per N with allocation N failing: every N up to PREFIX (default 300), then
# SAMPLES (default 300) evenly spread N up to the total. RUNS (default
# "1 2") is the list of how many allocations fail in a row from N, taken in
# turn: Lua retries a failed allocation once after a full collection, so
# only a second failure reaches the error paths behind it. Each run must
# end with exit 0..3 and no sanitizer, leak or crash report.
# ALLOC_FAIL_ALL=1 tries every N (tens of thousands of runs: see
# docs/quality.md); ALLOC_FAIL_REPORT (alloc_fail.c) is passed on.
# OP_TEST_PART=K/P (ctest runs P parts at once, tests/alloc/CMakeLists.txt)
# makes this run the K-th of every P runs of that list; the P parts
# together are the whole list.
set -u
exe=$1
export OPTIPIPE_HOME=$2
samples=${3:-300}
prefix=${4:-300}
read -r -a runs_list <<<"${5:-1 2}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

total=$("$exe" 0 2>"$out") || { echo "FAIL: the run without failures failed"; cat "$out"; exit 1; }
step=$(( total > prefix ? (total - prefix) / samples + 1 : 1 ))
[ "${ALLOC_FAIL_ALL:-0}" = 1 ] && step=1
echo "$total allocations; failing each of 1..$prefix, then one N in ${step};" \
     "${runs_list[*]} in a row, in turn"
part=${OP_TEST_PART:-0/1}
nparts=${part#*/} part=${part%/*}
fail=0 runs=0 n=1 idx=0
while [ "$n" -le "$total" ]; do
    k=${runs_list[$((idx % ${#runs_list[@]}))]}
    idx=$((idx + 1))
    if [ $(((idx - 1) % nparts)) != "$part" ]; then
        if [ "$n" -lt "$prefix" ]; then n=$((n + 1)); else n=$((n + step)); fi
        continue
    fi
    ALLOC_FAIL_RUN=$k timeout 120 "$exe" "$n" >"$out" 2>&1
    rc=$?
    runs=$((runs + 1))
    if [ "$rc" -gt 3 ] || grep -qE "Sanitizer|runtime error|LeakSanitizer" "$out"; then
        fail=1
        echo "FAIL: allocation $n ($k in a row): exit $rc; again:" \
             "OPTIPIPE_HOME=$OPTIPIPE_HOME ALLOC_FAIL_RUN=$k ALLOC_FAIL_TRACE=1 $exe $n"
        grep -m 12 -E "ERROR|SUMMARY|runtime error|#[0-9] " "$out" | sed 's/^/    /'
    fi
    if [ "$n" -lt "$prefix" ]; then n=$((n + 1)); else n=$((n + step)); fi
done
echo "$runs runs in ${SECONDS}s (part $part of 0..$((nparts - 1))), $([ $fail = 0 ] && echo "all clean" || echo "some FAILED")"
exit $fail
