#!/usr/bin/env bash
# The Samza input (docs/inputs.md "Samza"): a dump of the metrics topic
# (MetricsSnapshotReporter messages, one per line) reads as one run per
# job: container, task, store and changelog nodes; the newest snapshot's
# values whatever the order; a bad message is named and the others read.
# Usage: samza.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
cd "$tmp" || exit 1
fx=$src/fixtures/streaming/samza/metrics-topic.jsonl
q() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
store='[n for n in d["runs"][0]["nodes"] if n["kind"]=="store"][0]'

"$bin" normalize --format json "$fx" >a.json 2>err
check "the dump reads (exit 0)" test $? = 0
E2E_OUT=a.json
check "one samza run per job" test "$(q a.json '[(r["source"], r["job"]) for r in d["runs"]]')" = "[('samza', 'page-views')]"
check "the samza version" test "$(q a.json 'd["runs"][0]["engine_version"]')" = 1.8.0
check "store restore time" test "$(q a.json "$store['metrics']['restore_time_ms']")" = 2400000
check "the newest estimate-num-keys" test "$(q a.json "$store['metrics']['estimated_keys']")" = 44000000
check "changelog lag of the changelog partition only" test "$(q a.json '[n["metrics"]["records_lag"] for n in d["runs"][0]["nodes"] if n["kind"]=="changelog"]')" = "[2000000]"
check "four snapshots, a minute" test "$(q a.json '(d["runs"][0]["metrics"]["snapshots"], d["runs"][0]["metrics"]["window_ms"])')" = "(4, 60000)"

tac "$fx" >rev.jsonl
"$bin" normalize --format json rev.jsonl >b.json 2>err
check "reversed: still the newest value" test "$(q b.json "$store['metrics']['estimated_keys']")" = 44000000

{ head -1 "$fx"; echo '{"header": {"job-name": "page-views"}, "metrics": {}}'; tail -n +2 "$fx"; } >bad.jsonl
"$bin" normalize --format json bad.jsonl >c.json 2>err
E2E_OUT=err
check "a bad message is named" has err 'snapshot 2: header.job-name, header.time'
check "the other messages are read" test "$(q c.json 'd["runs"][0]["metrics"]["snapshots"]')" = 4

# a time no int64_t holds (fuzz_samza found it: the conversion was undefined)
{ head -1 "$fx"; echo '{"header": {"job-name": "page-views", "time": 1.76458e+20}, "metrics": {}}'; tail -n +2 "$fx"; } >far.jsonl
"$bin" normalize --format json far.jsonl >d.json 2>err
check "a time out of range is named" has err 'snapshot 2: header.time 1.76458e+20 is out of range'
check "... and the other messages are read" test "$(q d.json 'd["runs"][0]["metrics"]["snapshots"]')" = 4
finish
