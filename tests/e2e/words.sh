#!/usr/bin/env bash
# Numbers and words in what people read (issue #19): the text, markdown
# and html reports of the demo bundle and of every real artifact
# (../shared/real; skipped with a notice when absent) carry no
#  - "1 <noun>s" for the nouns reports and rules count (1 executors),
#  - ratios written "36.9x" (every engine writes 36.9×, core/fmt.c),
#  - evidence values with an exponent (9.905e+06),
#  - "100%" in a finding whose evidence holds a share in [0.995, 1),
#    checked on the json report of the same inputs.
# Usage: words.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
real=${3:-}
. "$(dirname "$0")/lib/check.sh"

NOUNS='executor|query|querie|task|run|checkpoint|subtask|slot|result|finding|input|warning|error|model|node|thread|core|partition|operator|restart|failover|request|test|view|stage|wave|attempt|record|row|vert(ice|exe)'

# no_plural_one FILE: no "1 <noun>s" (queries: "1 queries")
no_plural_one() { ! grep -Eiw "1 ($NOUNS)s" "$1"; }
# no_x_ratio FILE: no "36.9x" (a digit, then x, then a word boundary)
no_x_ratio() { ! grep -E '(^|[ (])[0-9]+(\.[0-9]+)?x([ ),.;:]|$)' "$1"; }
# no_exponent FILE: no evidence value like 9.905e+06 in text (key=value),
# markdown (| value |) or html (<dd>value</dd>)
no_exponent() {
    ! grep -E '(=|\| |<dd>)-?[0-9]+(\.[0-9]+)?e[+-]?[0-9]+(,|$| \||</dd>)' "$1"
}
# no_rounded_share JSON: "100%" only where no evidence share is in [0.995, 1)
no_rounded_share() {
    python3 - "$1" <<'PY'
import json, sys
bad = []
for f in json.load(open(sys.argv[1]))["findings"]:
    text = (f.get("message") or "") + " " + (f.get("recommendation") or "")
    near = [k for k, v in (f.get("evidence") or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and 0.995 <= v < 1]
    if "100%" in text and near:
        bad.append("%s: 100%% with %s" % (f["rule"], near))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# words LABEL INPUT...: all four checks on the reports of INPUT...
words() {
    local label=$1 fmt
    shift
    for fmt in text markdown html; do
        "$bin" analyze -v --format "$fmt" "$@" >"$tmp/out" 2>"$tmp/err"
        check "$label: $fmt report written" test -s "$tmp/out"
        check "$label: $fmt: no '1 <noun>s'" no_plural_one "$tmp/out"
        check "$label: $fmt: ratios use ×" no_x_ratio "$tmp/out"
        check "$label: $fmt: no exponent in evidence" no_exponent "$tmp/out"
    done
    "$bin" analyze --format json "$@" >"$tmp/out" 2>"$tmp/err"
    check "$label: no share below 100% shown as 100%" no_rounded_share "$tmp/out"
}

# The checks themselves catch what they are for.
fails() { ! "$@"; }
printf '1 executors would finish\n' >"$tmp/bad"
check "the plural check catches '1 executors'" fails no_plural_one "$tmp/bad"
printf 'ran 1m 40s, 36.9x the median\n' >"$tmp/bad"
check "the ratio check catches '36.9x'" fails no_x_ratio "$tmp/bad"
printf '    evidence: r2=1, time_left_ms=9.905e+06\n' >"$tmp/bad"
check "the exponent check catches 'time_left_ms=9.905e+06'" fails no_exponent "$tmp/bad"
printf '{"findings":[{"rule":"r","message":"100%% of the build","evidence":{"share":0.995}}]}' \
    >"$tmp/bad"
check "the share check catches 100% for 0.995" fails no_rounded_share "$tmp/bad"

words demo "$src/fixtures/demo"
# The demo's own cases of the issue read right.
"$bin" analyze -v --format text "$src/fixtures/demo" >"$tmp/out" 2>"$tmp/err"
check "demo: run durations as people write them" has "$tmp/out" "running, 6h 00m"
check "demo: 99.5% of the build" has "$tmp/out" "99.5% of the 34m 07s build"
check "demo: evidence without exponent" has "$tmp/out" "time_left_ms=9904615"
check "demo: ratios with ×" has "$tmp/out" "36.9× the median"

if [ -n "$real" ] && [ -d "$real" ]; then
    for d in "$real"/*/; do
        words "real $(basename "$d")" "$d"
    done
else
    echo "NOTICE: real artifacts not found at '${real}': skipped their checks"
fi
finish
