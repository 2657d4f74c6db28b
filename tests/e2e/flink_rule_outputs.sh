#!/usr/bin/env bash
# Checks over every finding of every Flink fixture (fixtures/flink/*.json
# and the demo export), so a rule cannot slip back:
#   - no change proposes a placeholder ("s3://<bucket>/...", "TODO",
#     "your-..."): a change is a value to approve, never a stand-in;
#   - a slow upload (flink.checkpoint-phases, phase async) never gets
#     unaligned checkpoints as advice or change;
# and the HTML report's checkpoint-phase chart: drawn from the per-subtask
# details, one bar segment per phase, the vertex name escaped.
# Usage: flink_rule_outputs.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"

for fx in "$src"/fixtures/flink/*.json "$src"/fixtures/demo/flink-*.json; do
    name=$(basename "$fx" .json)
    "$bin" analyze --format json --deterministic "$fx" >"$tmp/$name.json" 2>"$tmp/err"
    check "$name: analyze exits 0" test $? = 0
done

check "no change of any Flink finding is a placeholder" python3 - "$tmp" <<'PY'
import glob, json, re, sys
bad = []
pat = re.compile(r"<[^>]*>|TODO|your-", re.I)
for path in glob.glob(sys.argv[1] + "/*.json"):
    for f in json.load(open(path)).get("findings", []):
        for c in f.get("changes") or []:
            for side in ("to",):
                v = c.get(side)
                if isinstance(v, str) and pat.search(v):
                    bad.append("%s %s %s=%r" % (path, f["rule"], c.get("key"), v))
assert not bad, bad
PY

check "a slow upload is never advised unaligned checkpoints" python3 - "$tmp" <<'PY'
import glob, json, sys
seen = 0
for path in glob.glob(sys.argv[1] + "/*.json"):
    for f in json.load(open(path)).get("findings", []):
        if f["rule"] != "flink.checkpoint-phases" or f["evidence"].get("phase") != "async":
            continue
        seen += 1
        assert "unaligned" not in f["recommendation"].lower(), f["recommendation"]
        for c in f.get("changes") or []:
            assert "unaligned" not in c.get("key", ""), c
assert seen > 0, "no async-phase finding: the fixture checkpoint-phases-async no longer fires"
PY

# --- the HTML chart, with a hostile vertex name -------------------------------
python3 - "$src/fixtures/flink/checkpoint-phases-backpressure.json" "$tmp/evil.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
text = text.replace("Window(TumblingEventTimeWindows(60000)",
                    "Window <script>alert(1)</script> &amp; \\\"q\\\" (TumblingEventTimeWindows(60000)")
json.dump(json.loads(text), open(sys.argv[2], "w"))
PY
E2E_OUT=$tmp/evil.html
"$bin" analyze --format html --deterministic "$tmp/evil.json" >"$tmp/evil.html" 2>"$tmp/err"
check "html of the phases fixture exits 0" test $? = 0
check "the checkpoint-phase chart is drawn" has "$tmp/evil.html" 'data-chart="flink-checkpoint-phases"'
check "...with the four phases of the slowest subtask" python3 - "$tmp/evil.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
fig = re.search(r'data-chart="flink-checkpoint-phases".*?</figure>', h, re.S).group(0)
for p in ("start delay 2m ", "alignment 3.2 s", "sync 100 ms", "async 2.3 s"):
    assert "<title>%s" % p in fig, p
assert "<td class=\"num\">2</td>" in fig  # slowest subtask in the table
PY
check "...and the vertex name escaped" python3 - "$tmp/evil.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
fig = re.search(r'data-chart="flink-checkpoint-phases".*?</figure>', h, re.S).group(0)
assert "<script" not in fig, "raw script in the chart"
assert "&lt;script&gt;alert(1)&lt;/script&gt;" in fig
PY
E2E_OUT=$tmp/healthy.html
"$bin" analyze --format html --deterministic "$src/fixtures/flink/healthy.json" >"$tmp/healthy.html" 2>"$tmp/err"
check "no subtask details: no phase chart" sh -c "! grep -q flink-checkpoint-phases \"\$1\"" _ "$tmp/healthy.html"
finish
