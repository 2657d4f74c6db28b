#!/usr/bin/env bash
# Golden files of every output format on the demo bundle: each report is
# regenerated with --deterministic (zero elapsed times) from the source
# tree, so input paths are the relative fixtures/demo/..., and compared
# byte for byte with tests/golden/demo.<format>.
#
# After an intended change (a rule's message, a chart), regenerate them and
# review the diff:
#   OP_UPDATE_GOLDEN=1 bash tests/e2e/report_golden.sh build/optipipe .
# Usage: report_golden.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
unset OPTIPIPE_DOCS_URL

# FORMAT EXTRA-ARGS: junit gates at warning, as CI would run it.
formats="text json markdown sarif junit html"
args_for() { [ "$1" = junit ] && echo "--fail-on warning"; }

cd "$src" || exit 1
for fmt in $formats; do
    golden="tests/golden/demo.$fmt"
    # shellcheck disable=SC2046
    "$bin" analyze --format "$fmt" --deterministic $(args_for "$fmt") fixtures/demo \
        >"$tmp/out.$fmt" 2>"$tmp/err.$fmt"
    rc=$?
    want_rc=0
    [ "$fmt" = junit ] && want_rc=1
    if [ "$rc" != "$want_rc" ]; then
        echo "FAIL: $fmt exits $rc (want $want_rc): $(head -c 400 "$tmp/err.$fmt")"
        fail=$((fail + 1))
        continue
    fi
    if [ "${OP_UPDATE_GOLDEN:-}" = 1 ]; then
        mkdir -p tests/golden
        cp "$tmp/out.$fmt" "$golden"
        echo "updated $golden"
        pass=$((pass + 1))
    elif [ ! -f "$golden" ]; then
        echo "FAIL: $golden is missing (OP_UPDATE_GOLDEN=1 creates it)"
        fail=$((fail + 1))
    elif cmp -s "$tmp/out.$fmt" "$golden"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $fmt differs from $golden (OP_UPDATE_GOLDEN=1 to accept):"
        diff -u "$golden" "$tmp/out.$fmt" | head -40
        fail=$((fail + 1))
    fi
done

# The same bytes twice: nothing volatile slipped into a report.
for fmt in $formats; do
    # shellcheck disable=SC2046
    "$bin" analyze --format "$fmt" --deterministic $(args_for "$fmt") fixtures/demo \
        >"$tmp/again.$fmt" 2>/dev/null
    if cmp -s "$tmp/out.$fmt" "$tmp/again.$fmt"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $fmt differs between two runs"
        fail=$((fail + 1))
    fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
