#!/usr/bin/env bash
# analyze --emit-changes: patches compared byte for byte with expected files
# (tests/e2e/emit/expected/), from a hand-written model and a test rule that
# reports the changes its nodes describe; approved-only versus --all;
# dismissed findings never emitted; and the real demo's parallelism line.
# Usage: emit_changes.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=/nonexistent
here=$src/tests/e2e/emit
export SOURCE_DATE_EPOCH=1732870000
same_dir() { # same_dir EXPECTED ACTUAL
    diff -ru "$1" "$2"
}
op() { "$bin" "$@" --no-bundled --rules "$here/rules" --no-config; }

op analyze -q --all --emit-changes "$tmp/all" "$here/model.json" >"$tmp/out" 2>"$tmp/err"
check "--all exits 0" test $? = 0
check "--all writes the expected files" same_dir "$here/expected/all" "$tmp/all"

op analyze -q --emit-changes "$tmp/none" "$here/model.json" >"$tmp/out" 2>"$tmp/err"
check "approved changes need a baseline" test $? = 2
check "... and it says so" grep -q -- "--baseline" "$tmp/err"

# approve the window's parallelism, dismiss everything else
fp=$(op analyze --format json "$here/model.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([f["fingerprint"] for f in d["findings"] if f.get("node") == "a1b2c3d4e5f60718293a4b5c6d7e8f90"][0])')
op baseline create "$here/model.json" -o "$tmp/b.json" 2>/dev/null
check "baseline create exits 0" test $? = 0
op baseline update "$here/model.json" -o "$tmp/b.json" --fingerprint "$fp" \
    --status approved 2>/dev/null
check "baseline update exits 0" test $? = 0
op analyze -q --baseline "$tmp/b.json" --emit-changes "$tmp/approved" \
    "$here/model.json" >"$tmp/out"
check "approved-only exits 0" test $? = 0
check "only the approved change is written" same_dir "$here/expected/approved" "$tmp/approved"
op analyze -q --baseline "$tmp/b.json" --all --emit-changes "$tmp/all2" \
    "$here/model.json" >"$tmp/out"
check "--all leaves dismissed findings out" same_dir "$here/expected/approved" "$tmp/all2"

# the real demo: the bottleneck becomes a vertex parallelism override
"$bin" analyze -q --no-config --all --emit-changes "$tmp/demo" "$src/fixtures/demo" >/dev/null
check "demo exits 0" test $? = 0
check "demo flink patch has the override" grep -q \
    '^pipeline.jobvertex-parallelism-overrides: 473ae7b7c8eede2cdbe5a3f4ab74c987:16$' \
    "$tmp/demo/flink-orders-per-minute.yaml"
check "demo spark patch has spark-defaults lines" grep -q '^spark\.[a-zA-Z.]* [^ ]*$' \
    "$tmp/demo/spark-nightly-orders.conf"
"$bin" analyze -q --no-config --all --emit-changes "$tmp/demo2" "$src/fixtures/demo" >/dev/null
check "emitted files are deterministic" same_dir "$tmp/demo" "$tmp/demo2"

echo "$pass passed, $fail failed"
test $fail = 0
