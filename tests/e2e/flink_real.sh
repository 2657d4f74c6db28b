#!/usr/bin/env bash
# Flink findings on real exports (../shared/real/flink; skipped with a
# notice when absent): a FAILED job from a HistoryServer archive gets an
# error finding naming its root exception, the failing vertex and the
# missing restart strategy, not only "incomplete inputs".
# Usage: flink_real.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
real=${3:-}
. "$(dirname "$0")/lib/check.sh"

if [ -z "$real" ] || [ ! -d "$real/flink" ]; then
    echo "NOTICE: real artifacts not found at '${real}': skipped"
    finish
    exit
fi
F=$real/flink

"$bin" analyze -q --format json "$F/historyserver-archive_flink-1.15_failed-job_streampark.json" \
    >"$tmp/out" 2>"$tmp/err"
check "the failed archive is analyzed" json_ok "$tmp/out"
check "a FAILED job: one error finding with its root exception and vertex" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["rule"] == "flink.job-failed"]
assert len(f) == 1, f
f = f[0]
assert f["severity"] == "error", f
ev = f["evidence"]
assert ev["root_cause"] == "java.lang.Exception: aa", ev
assert ev["failing_vertex"].startswith("Source: Socket Stream"), ev
assert ev["restart_strategy"] == "none", ev
assert "NoRestartBackoffTimeStrategy" in f["message"], f["message"]
ch = f["changes"]
assert ch and ch[0]["to"] == "exponential-delay", ch' "$tmp/out"

# every real /jobs/<jid> export still reads and analyzes
for j in "$F"/jobs-jid_*.json; do
    "$bin" analyze -q --format json "$j" >"$tmp/j.json" 2>/dev/null
    check "$(basename "$j"): analyzed" json_ok "$tmp/j.json"
done
finish
