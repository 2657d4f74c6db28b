#!/usr/bin/env bash
# analyze --emit-changes: patches compared byte for byte with expected files
# (tests/e2e/emit/expected/), from a hand-written model and a test rule that
# reports the changes its nodes describe; approved-only versus --all;
# dismissed findings never emitted; the real demo's parallelism line; and
# a hostile model (tests/e2e/emit/hostile.py) whose ids, keys and values
# try to add lines of their own: every such change is refused, in the
# patch and on stderr, and no line but the intended ones appears.
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

# hostile ids, keys and values
python3 "$here/hostile.py" "$tmp/hostile.json"
op analyze --all --emit-changes "$tmp/hostile" "$tmp/hostile.json" >"$tmp/out" 2>"$tmp/err"
check "hostile model exits 0" test $? = 0
check "hostile patches are the expected ones" same_dir "$here/expected/hostile" "$tmp/hostile"
only_lines() { # only_lines FILE ERE: every line not blank or a comment matches ERE
    ! grep -v -E '^( *#.*)?$' "$1" | grep -q -v -E "$2"
}
check "flink patch: only the intended config lines" only_lines \
    "$tmp/hostile/flink-hostile.yaml" \
    '^(pipeline\.name: "fine # not a comment"|pipeline\.jobvertex-parallelism-overrides: d4b2c3d4e5f60718293a4b5c6d7e8f90:8)$'
check "spark patch: only the intended line, backslashes escaped" only_lines \
    "$tmp/hostile/spark-hostile.conf" '^spark\.local\.dir C:\\\\tmp\\\\$'
check "dbt patch: only model d" only_lines "$tmp/hostile/dbt-hostile.yml" \
    '^(models:|  - name: d|    config:|      materialized: table)$'
check "other patch: nothing but comments" only_lines "$tmp/hostile/airflow-hostile.txt" '^$'
check "no injected line anywhere" sh -c "! grep -r -q -E '^ *(env\.java|spark\.driver|- name: evil|retries)' '$tmp/hostile'"
check "patches are valid UTF-8" python3 -c '
import sys, pathlib
for p in pathlib.Path(sys.argv[1]).iterdir():
    p.read_bytes().decode("utf-8")' "$tmp/hostile"
check "the builder refused the vertex id with newlines, naming input and node" has "$tmp/err" \
    'hostile.json: warning: run flink/f0hostile: node "x:1\\nenv.java.opts.all: -javaagent:/tmp/evil.jar\\n#": refused: the id has a control character'
check "stderr names file, rule and finding of a refused change" has "$tmp/err" \
    'flink-hostile.yaml: emit.changes \[[0-9a-f]\{16\}\]: change refused: key "pipeline.name\\nenv.java.opts.all" has a control character'
check "stderr: one line per refused change" test "$(grep -c ': change refused: ' "$tmp/err")" = 19
check "stderr: the count, even with -q" has "$tmp/err" '^optipipe: 19 change(s) refused'
check "the patches count their refusals" has "$tmp/hostile/flink-hostile.yaml" '^# 9 changes refused'
# a plugin that stops at a refused run id: the input is not read, and says why
python3 - "$src/fixtures/dbt/healthy/run_results-2024-05-06.json" "$tmp/run_results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["metadata"]["invocation_id"] = "inv\nenv.java.opts.all: x"
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" analyze --no-config "$tmp/run_results.json" >"$tmp/out" 2>"$tmp/err"
check "a refused run id leaves the input unread (exit 3)" test $? = 3
check "... naming the id" has "$tmp/err" 'run_results.json: warning: run "inv\\nenv.java.opts.all: x": refused: the id has a control character'
check "... and why the input stopped" has "$tmp/err" 'run_results.json: error: not read: stopped at a refused id (above)'

if python3 -c 'import yaml' 2>/dev/null; then
    check "flink patch reads as YAML with only the intended keys" python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
assert d == {"pipeline.name": "fine # not a comment",
             "pipeline.jobvertex-parallelism-overrides": "d4b2c3d4e5f60718293a4b5c6d7e8f90:8"}, d' \
        "$tmp/hostile/flink-hostile.yaml"
    check "dbt patch reads as YAML with model d only" python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
assert d == {"models": [{"name": "d", "config": {"materialized": "table"}}]}, d' \
        "$tmp/hostile/dbt-hostile.yml"
else
    echo "NOTICE: python3 yaml module missing; YAML parse checks skipped"
fi

echo "$pass passed, $fail failed"
test $fail = 0
