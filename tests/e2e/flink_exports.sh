#!/usr/bin/env bash
# Several Flink exports of one job (docs/flink.md "Several exports of one
# job"): an export split into two files by capture time reads as the
# original (same model, same findings); the same file given twice counts
# once, with a warning; exports of different jobs stay apart; a file in
# the middle that fails to parse leaves the others analyzed.
# Usage: flink_exports.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
cd "$tmp" || exit 1

# split.py IN FIRST SECOND: FIRST holds the main capture and every sample
# but the last, SECOND the last sample as an export of its own
cat >split.py <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
last = d["samples"].pop()
json.dump(d, open(sys.argv[2], "w"))
json.dump({"flink_rest_export": 1, "base_url": d.get("base_url", ""),
           "captured_at_ms": last["captured_at_ms"],
           "responses": last["responses"]}, open(sys.argv[3], "w"))
EOF
# model.py JSON: the normalized model without what names the files
cat >model.py <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["runs"]:
    for k in ("origin", "origins", "warnings"):
        r.pop(k, None)
print(json.dumps(d, sort_keys=True))
EOF
runs() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' "$1"; }
findings() { python3 -c '
import json, sys
print(sorted((f["rule"], f["message"]) for f in json.load(open(sys.argv[1]))["findings"]))' "$1"; }

orig=$src/fixtures/flink/checkpoint-trend-rising.json
python3 split.py "$orig" first.json second.json

"$bin" normalize --format json "$orig" >whole.json 2>err
"$bin" normalize --format json second.json first.json >split.json 2>err
check "the whole export: one run" test "$(runs whole.json)" = 1
check "a split export normalizes as the whole" \
    cmp -s <(python3 model.py whole.json) <(python3 model.py split.json)
check "the split run names both files" \
    python3 -c 'import json,sys; r=json.load(open("split.json"))["runs"][0]; sys.exit(r["origins"] != ["second.json", "first.json"])'
check "the split run has three polls" \
    python3 -c 'import json,sys; r=json.load(open("split.json"))["runs"][0]; sys.exit(r["metrics"]["samples"] != 2)'

"$bin" analyze --format json "$orig" >whole-a.json 2>err
"$bin" analyze --format json first.json second.json >split-a.json 2>err
check "a split export gives the same findings" \
    cmp -s <(findings whole-a.json) <(findings split-a.json)

cp "$orig" again.json
"$bin" normalize --format json "$orig" again.json >twice.json 2>err
check "the same export twice: the model of one" \
    cmp -s <(python3 model.py whole.json) <(python3 model.py twice.json)
check "the same export twice: a warning names both" has twice.json \
    'again.json repeats 3 captures of .*checkpoint-trend-rising.json (same captured_at_ms): read once'

other=$src/fixtures/flink/healthy.json
"$bin" normalize --format json "$orig" "$other" >two.json 2>err
check "exports of two jobs stay two runs" test "$(runs two.json)" = 2

printf '{"flink_rest_export": 1, "responses": [' >broken.json
"$bin" normalize --format json first.json broken.json second.json >mixed.json 2>err
rc=$?
check "a broken export among them: exit 0 (others read)" test "$rc" = 0
check "a broken export among them: named on stderr" has err 'broken.json'
check "a broken export among them: the others still merge" \
    cmp -s <(python3 model.py whole.json) <(python3 model.py mixed.json)

finish
