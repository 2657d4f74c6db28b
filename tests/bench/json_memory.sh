#!/bin/sh
# JSON memory benchmark (not a ctest test): peak RSS of `optipipe analyze`
# on generated hostile JSON inputs (gen_json_hostile.py) and on the real
# exports, as a multiple of the input size. The multiple is
# (peak RSS - RSS of a run on a 200-byte input) / input bytes, so the
# binary's own footprint does not count. Prints the Markdown table of
# docs/inputs.md "Memory".
#
# Usage: tests/bench/json_memory.sh [OPTIPIPE] [WORKDIR]
#   OPTIPIPE  the binary (default build/optipipe)
#   WORKDIR   where the inputs are generated (default /tmp/optipipe-jsonmem)
# Environment: MB (default 40): size of the generated inputs in MiB;
#   REAL (default ../shared/real next to the source dir).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:-$src/build/optipipe}
work=${2:-/tmp/optipipe-jsonmem}
mb=${MB:-40}
real=${REAL:-$src/../shared/real}

for tool in python3 /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || { echo "missing: $tool" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "no binary at $bin (build it first)" >&2; exit 2; }
mkdir -p "$work"

# Prints "maxrss_kib exit_code" of one analyze run of $@.
rss() {
    /usr/bin/time -f "%M" -o "$work/time.txt" "$bin" analyze "$@" \
        >/dev/null 2>"$work/err.txt" && rc=0 || rc=$?
    echo "$(tail -n 1 "$work/time.txt") $rc"
}

# Bytes of the inputs $@ (files or folders).
bytes() {
    find "$@" -type f -name '*.json' -exec cat {} + | wc -c
}

printf '{"flink-version": "1.18.0", "refresh-interval": 3000}' >"$work/base.json"
set -- $(rss "$work/base.json")
base=$1

echo "| input | size | peak RSS | exit | (RSS - base) / size |"
echo "|---|---:|---:|---:|---:|"
row() {
    name=$1
    shift
    size=$(bytes "$@")
    set -- $(rss "$@")
    awk -v n="$name" -v s="$size" -v r="$1" -v b="$base" -v rc="$2" 'BEGIN {
        printf "| %s | %.1f MiB | %.0f MiB | %d | %.1f |\n",
               n, s / 1048576, r / 1024, rc, (r - b) * 1024 / s }'
}
for kind in flink-zeros flink-vertices flink-dense dbt-zeros model-zeros; do
    f="$work/$kind-$mb.json"
    [ -s "$f" ] || python3 "$here/gen_json_hostile.py" "$kind" "$mb" "$f"
    row "$kind ($mb MiB)" "$f"
done
for d in flink dbt; do
    [ -d "$real/$d" ] && row "real/$d (all files)" "$real/$d"
done
[ -d "$src/fixtures/flink" ] && row "fixtures/flink (all files)" "$src/fixtures/flink"
echo
echo "base: $base KiB (a one-line /config response)"
