#!/usr/bin/env bash
# Output encoding of every JSON writer: a model input whose run name, node
# name, attribute key and value and file name hold broken UTF-8 bytes
# (and control characters in names). The JSON report, SARIF and normalize
# must each load with python3's json module (which refuses invalid UTF-8),
# with U+FFFD exactly where each broken byte was.
# Usage: json_encoding.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"

python3 - "$tmp/in.json" <<'PY'
import sys
doc = (b'{"schema": 1, "runs": [{"source": "spark", "id": "app-1", '
       b'"name": "nightly \xff\xfe run", "nodes": [{"id": "stage-0-0", '
       b'"name": "scan \xc3( \xed\xa0\x80 \x1b[2J", "attrs": {"k\xe2\x82": "v\x80"}}]}]}')
open(sys.argv[1], "wb").write(doc)
PY
cp "$tmp/in.json" "$tmp/in-$(printf '\xff').json"
E2E_ERR=$tmp/err.json
"$bin" analyze --no-config --deterministic --format json "$tmp/in.json" \
    "$tmp/in-$(printf '\xff').json" >"$tmp/out.json" 2>"$tmp/err.json"
check "json report exits 0" test $? = 0
check "json report loads with json.load, U+FFFD in place" python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = [r["name"] for r in d["runs"]]
assert names == ["nightly \ufffd\ufffd run"], names
paths = [i["path"] for i in d["inputs"]]
assert any(p.endswith("in-\ufffd.json") for p in paths), paths' "$tmp/out.json"

"$bin" analyze --no-config --deterministic --format sarif "$tmp/in.json" \
    >"$tmp/out.sarif" 2>"$tmp/err.sarif"
check "sarif exits 0" test $? = 0
check "sarif loads with json.load" python3 -c '
import json, sys
json.load(open(sys.argv[1], encoding="utf-8"))' "$tmp/out.sarif"

E2E_ERR=$tmp/err.norm
"$bin" normalize "$tmp/in.json" >"$tmp/out.norm" 2>"$tmp/err.norm"
check "normalize exits 0" test $? = 0
check "normalize loads with json.load, U+FFFD in place, controls escaped" python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
r = d["runs"][0]
assert r["name"] == "nightly \ufffd\ufffd run", r["name"]
n = r["nodes"][0]
assert n["name"] == "scan \ufffd( \ufffd\ufffd\ufffd \x1b[2J", n["name"]
assert n["attrs"] == {"k\ufffd\ufffd": "v\ufffd"}, n["attrs"]' "$tmp/out.norm"
check "normalize writes the control as an escape" has "$tmp/out.norm" 'u001b\[2J'
# what normalize wrote reads back as the same model
"$bin" normalize "$tmp/out.norm" >"$tmp/out.norm2" 2>"$tmp/err.norm"
check "normalize output reads back" python3 -c '
import json, sys
a = json.load(open(sys.argv[1], encoding="utf-8"))["runs"][0]
b = json.load(open(sys.argv[2], encoding="utf-8"))["runs"][0]
for k in ("name", "nodes"):
    assert a[k] == b[k], (a[k], b[k])' "$tmp/out.norm" "$tmp/out.norm2"

finish
