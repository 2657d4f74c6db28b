#!/bin/sh
# Spark benchmark (not a ctest test): opti-pipe on generated Spark 3 event
# logs against (a) a Python standard-library script computing the same
# per-stage sums (spark_sums.py), (b) jq doing the same (spark_sums.jq), and
# (c) `zstd -dc` of the same log compressed; plus peak RSS at two log sizes.
# Results go to stdout as the Markdown table of docs/performance.md.
#
# Usage: tests/bench/spark_bench.sh [OPTIPIPE] [WORKDIR]
#   OPTIPIPE  the binary (default build/optipipe)
#   WORKDIR   where the logs are generated and kept (default /tmp/optipipe-bench)
# Environment: SMALL (default 60M), BIG (default 600M) log sizes; RUNS (3):
# repetitions of the fast commands (the best is kept); SKIP_JQ=1 skips jq
# (about a minute on the big log); BASELINE=BIN adds the same commands run
# by another build (e.g. an older commit built side by side) and the ratio;
# SMOKE=1 is the suite's quick check (2M and 6M logs, one run, no jq): the
# script runs end to end, the sums agree, the table is printed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:-$src/build/optipipe}
work=${2:-/tmp/optipipe-bench}
small=${SMALL:-60M}
big=${BIG:-600M}
runs=${RUNS:-3}
base=${BASELINE:-}
if [ "${SMOKE:-0}" = 1 ]; then
    small=2M big=6M runs=1 SKIP_JQ=1
fi
gen="$src/fixtures/spark/gen_eventlog.py"

for tool in python3 jq zstd /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || { echo "missing: $tool" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "no binary at $bin (build it first)" >&2; exit 2; }
mkdir -p "$work"

# A log of size $1 at $2 (kept between runs: generation takes a while).
make_log() {
    if [ ! -s "$2" ]; then
        echo "generating $1 -> $2" >&2
        python3 "$gen" --size "$1" --seed 7 -o "$2.tmp"
        mv "$2.tmp" "$2"
    fi
}

small_log="$work/spark-$small.log"
big_log="$work/spark-$big.log"
make_log "$small" "$small_log"
make_log "$big" "$big_log"
if [ ! -s "$big_log.zstd" ]; then
    # level 1: Spark's default (spark.io.compression.zstd.level)
    zstd -q -1 -f "$big_log" -o "$big_log.zstd"
fi
cat "$big_log" "$big_log.zstd" >/dev/null # warm the page cache

# Prints "seconds maxrss_kib" of one run of the command.
measure() {
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/err.txt" || {
        echo "failed: $*" >&2
        cat "$work/err.txt" >&2
        exit 1
    }
    cat "$work/time.txt"
}

# The best (lowest) time of $runs runs, with its RSS.
best() {
    b=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        r=$(measure "$@")
        if [ -z "$b" ] || awk -v a="${r% *}" -v c="${b% *}" 'BEGIN{exit !(a<c)}'; then
            b=$r
        fi
        i=$((i + 1))
    done
    echo "$b"
}

# Correctness first: opti-pipe's stage sums equal the Python script's.
"$bin" normalize --format json "$small_log" >"$work/model.json"
python3 "$here/spark_sums.py" "$small_log" >"$work/py.jsonl"
python3 - "$work/model.json" "$work/py.jsonl" <<'EOF'
import json, sys
nodes = {n["id"]: n for n in json.load(open(sys.argv[1]))["runs"][0]["nodes"]}
bad = 0
for line in open(sys.argv[2]):
    p = json.loads(line)
    m = nodes[p.pop("stage")]["metrics"]
    for k, v in p.items():
        got = (m["completed_tasks"] + m["failed_tasks"] + m["killed_tasks"]) if k == "tasks" \
            else round(m["executor_cpu_ms"] * 1e6) if k == "executor_cpu_ns" else m[k]
        bad += got != v
if bad:
    sys.exit("opti-pipe and the Python sums differ (%d values)" % bad)
EOF

mb() { echo $(( $(wc -c <"$1") / 1048576 )); }

opti_big=$(best "$bin" normalize --format json "$big_log")
opti_small=$(best "$bin" normalize --format json "$small_log")
opti_zstd=$(best "$bin" normalize --format json "$big_log.zstd")
zstd_dc=$(best zstd -dc "$big_log.zstd")
if [ -n "$base" ]; then
    base_big=$(best "$base" normalize --format json "$big_log")
    base_zstd=$(best "$base" normalize --format json "$big_log.zstd")
fi
py=$(measure python3 "$here/spark_sums.py" "$big_log")
if [ "${SKIP_JQ:-0}" = 1 ]; then
    jqr="nan 0"
else
    jqr=$(measure jq -n -c -f "$here/spark_sums.jq" "$big_log")
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.1f", a / b; else print "-" }'; }
t() { echo "${1% *}"; }
rss() { awk -v k="${1#* }" 'BEGIN{ printf "%.1f", k / 1024 }'; }

cat <<EOF
Spark benchmark: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)
logs: $(mb "$small_log") MiB and $(mb "$big_log") MiB plain ($(mb "$big_log.zstd") MiB as zstd -1), $(grep -c '"SparkListenerTaskEnd"' "$big_log") tasks in the big one

| command (big log) | wall s | peak RSS MiB | opti-pipe is |
|---|---|---|---|
| opti-pipe normalize, plain | $(t "$opti_big") | $(rss "$opti_big") | |
| (a) python3 spark_sums.py | $(t "$py") | $(rss "$py") | $(ratio "$(t "$py")" "$(t "$opti_big")")x faster |
| (b) jq -f spark_sums.jq | $(t "$jqr") | $(rss "$jqr") | $(ratio "$(t "$jqr")" "$(t "$opti_big")")x faster |
| opti-pipe normalize, zstd | $(t "$opti_zstd") | $(rss "$opti_zstd") | |
| (c) zstd -dc | $(t "$zstd_dc") | $(rss "$zstd_dc") | $(ratio "$(t "$opti_zstd")" "$(t "$zstd_dc")")x its time |
EOF
if [ -n "$base" ]; then
    cat <<EOF
| BASELINE normalize, plain | $(t "$base_big") | $(rss "$base_big") | $(ratio "$(t "$opti_big")" "$(t "$base_big")")x its time |
| BASELINE normalize, zstd | $(t "$base_zstd") | $(rss "$base_zstd") | $(ratio "$(t "$opti_zstd")" "$(t "$base_zstd")")x its time |
EOF
fi
cat <<EOF

| log | opti-pipe wall s | peak RSS MiB |
|---|---|---|
| $(mb "$small_log") MiB | $(t "$opti_small") | $(rss "$opti_small") |
| $(mb "$big_log") MiB | $(t "$opti_big") | $(rss "$opti_big") |
EOF
