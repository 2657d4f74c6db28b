#!/bin/sh
# Memory per stage (not a ctest test): generates a Spark log whose every
# stage has one task (STAGES stages, default 1 000 000, ~15 MB as .zst) and
# reports opti-pipe's peak RSS on it (/usr/bin/time -v) next to the RSS on
# a log of 1 000 stages, and the bytes per kept stage between the two (each
# stage has a job of its own, so a stage here costs a stage and a job). A
# log can claim any number of stages; the plugin keeps SP_MAX_STAGES
# (docs/spark.md "Limits") and prints the warnings that say so.
#
# Usage: tests/bench/spark_stages.sh [OPTIPIPE] [WORKDIR]
#   OPTIPIPE  the binary (default build/optipipe)
#   WORKDIR   where the logs are written (default /tmp/optipipe-bench)
# Environment: STAGES (1000000), COMMAND (normalize: the plugin and the
# model, no rules; "analyze" adds the rules), SMOKE=1 (a quick check for the
# suite: 3 000 stages, both commands must succeed and print the table; the
# deterministic bytes-per-stage bound is tests/unit/test_model_memory.c).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:-$src/build/optipipe}
work=${2:-/tmp/optipipe-bench}
stages=${STAGES:-1000000}
[ "${SMOKE:-0}" = 1 ] && stages=3000
cmd=${COMMAND:-normalize}

for tool in python3 zstd /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || { echo "missing: $tool" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "no binary at $bin (build it first)" >&2; exit 2; }
mkdir -p "$work"

# make_log N FILE: N jobs of one stage of one task each, zstd-compressed.
make_log() {
    [ -s "$2" ] && return 0
    echo "generating $1 stages -> $2" >&2
    python3 - "$1" <<'PY' | zstd -q -3 -o "$2.tmp"
import sys
n = int(sys.argv[1])
w = sys.stdout.write
w('{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n')
w('{"Event":"SparkListenerApplicationStart","App Name":"stages","App ID":'
  '"app-stages","Timestamp":1000,"User":"u"}\n')
for s in range(n):
    t = 2000 + s * 10
    w('{"Event":"SparkListenerJobStart","Job ID":%d,"Submission Time":%d,'
      '"Stage Infos":[{"Stage ID":%d,"Stage Attempt ID":0,"Stage Name":"s",'
      '"Number of Tasks":1,"Parent IDs":[]}],"Stage IDs":[%d],'
      '"Properties":{}}\n' % (s, t, s, s))
    w('{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":%d,'
      '"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":1,'
      '"Parent IDs":[],"Submission Time":%d}}\n' % (s, t))
    w('{"Event":"SparkListenerTaskStart","Stage ID":%d,"Stage Attempt ID":0,'
      '"Task Info":{"Task ID":%d,"Index":0,"Attempt":0,"Partition ID":0,'
      '"Launch Time":%d,"Executor ID":"1","Host":"h","Speculative":false}}\n'
      % (s, s, t))
    w('{"Event":"SparkListenerTaskEnd","Stage ID":%d,"Stage Attempt ID":0,'
      '"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":%d,'
      '"Index":0,"Attempt":0,"Partition ID":0,"Launch Time":%d,'
      '"Finish Time":%d,"Executor ID":"1","Host":"h","Speculative":false},'
      '"Task Metrics":{"Executor Run Time":5,"JVM GC Time":1}}\n'
      % (s, s, t, t + 5))
    w('{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":%d,'
      '"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":1,'
      '"Parent IDs":[],"Submission Time":%d,"Completion Time":%d}}\n'
      % (s, t, t + 6))
    w('{"Event":"SparkListenerJobEnd","Job ID":%d,"Completion Time":%d,'
      '"Job Result":{"Result":"JobSucceeded"}}\n' % (s, t + 7))
w('{"Event":"SparkListenerApplicationEnd","Timestamp":%d}\n' % (2000 + n * 10))
PY
    mv "$2.tmp" "$2"
}

# rss_kib FILE: peak RSS of one run, in KiB (a failed run fails the script).
rss_kib() {
    /usr/bin/time -v "$bin" "$cmd" "$1" >/dev/null 2>"$work/time.txt" || {
        echo "failed: $bin $cmd $1" >&2
        tail -5 "$work/time.txt" >&2
        exit 1
    }
    grep 'Maximum resident' "$work/time.txt" | awk '{print $NF}'
}

small="$work/stages-1000.zst"
big="$work/stages-$stages.zst"
make_log 1000 "$small"
make_log "$stages" "$big"
r0=$(rss_kib "$small")
r1=$(rss_kib "$big")
if [ "${SMOKE:-0}" = 1 ]; then
    cmd=analyze
    rss_kib "$big" >/dev/null
fi
warn=$("$bin" normalize --format json "$big" 2>/dev/null |
    grep -o '"[^"]*more than [0-9]* [a-zA-Z ]*;[^"]*"' | head -4 || true)
cap=50000 # SP_MAX_STAGES and SP_MAX_JOBS (plugins/spark/spark_internal.h)
kept=$stages
[ "$kept" -le "$cap" ] || kept=$cap
[ "$kept" -gt 1000 ] || { echo "STAGES must be over 1000" >&2; exit 2; }
echo "| log | size | peak RSS |"
echo "|---|---|---|"
echo "| 1000 stages | $(wc -c <"$small") B | $r0 KiB |"
echo "| $stages stages | $(wc -c <"$big") B | $r1 KiB |"
echo
echo "stages kept: $kept; bytes per kept stage (and its job):" \
    "$(( (r1 - r0) * 1024 / (kept - 1000) ))"
[ -z "$warn" ] || printf 'warnings:\n%s\n' "$warn"
