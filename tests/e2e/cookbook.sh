#!/usr/bin/env bash
# docs/cookbook.md: its code blocks are the files of docs/cookbook/team/
# word for word, and that pack's tests and lint pass through the same
# harness users run.
# Usage: cookbook.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
fail=0

python3 - "$src" <<'PY' || fail=1
import re, sys
src = sys.argv[1]
doc = open(src + "/docs/cookbook.md", encoding="utf-8").read()
blocks = re.findall(r"<!-- file: (\S+) -->\n```lua\n(.*?)```\n", doc, re.S)
bad = 0
for path, body in blocks:
    if open(src + "/" + path, encoding="utf-8").read() != body:
        print("FAIL: the block for %s differs from the file" % path)
        bad += 1
if len(blocks) < 10:
    print("FAIL: expected 10 file blocks, found %d" % len(blocks))
    bad += 1
print("%d cookbook blocks checked, %d differ" % (len(blocks), bad))
sys.exit(1 if bad else 0)
PY

out=$("$bin" rules test "$src/docs/cookbook/team")
rc=$?
echo "$out" | tail -1
if [ $rc != 0 ] || ! echo "$out" | grep -q "^20 passed, 0 failed$"; then
    echo "FAIL: cookbook rule tests"; echo "$out"; fail=1
fi
out=$("$bin" rules lint "$src/docs/cookbook/team")
rc=$?
if [ $rc != 0 ]; then
    echo "FAIL: cookbook lint"; echo "$out"; fail=1
fi
# the pack runs next to the bundled ones on the project's inputs
"$bin" analyze -q --format json --rules "$src/docs/cookbook/team" \
    "$src/fixtures/flink/retained-one.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rules = [f["rule"] for f in d["findings"]]
assert "team.flink-retained" in rules, rules
assert not d["rule_errors"], d["rule_errors"]
' || { echo "FAIL: analyze with the cookbook pack"; fail=1; }
exit $fail
