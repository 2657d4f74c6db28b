#!/usr/bin/env bash
# The state rules on what the streaming inputs read, end to end: scrapes
# of the three Kafka Streams exporter dialects (fixtures/streaming/, read
# by the prometheus plugin through the bundled mapping packs) and a Samza
# metrics dump give the restore-time, rocksdb-health and standbys
# findings the rules' own tests (synthetic models) promise; the three
# dialects give the same findings, rule for rule, node for node, message
# for message; a run without the state metrics gets none of them.
# Usage: streaming_advice.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
cd "$tmp" || exit 1
fx=$src/fixtures/streaming

# findings FILE: "rule node" a line, sorted
findings() {
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for f in sorted(d["findings"], key=lambda f: (f["rule"], f.get("node") or "", f["message"])):
    print(f["rule"], f.get("node"), f["severity"], f["message"], sep="\t")' "$1"
}

for dialect in jmx strimzi micrometer; do
    "$bin" analyze --no-config --format json --deterministic "$fx/kafka-streams-$dialect" \
        >"$dialect.json" 2>"$dialect.err"
    check "$dialect scrapes: analyzed (exit 0)" test $? = 0
    findings "$dialect.json" >"$dialect.tsv"
    E2E_OUT=$dialect.tsv
    check "$dialect: the restore time is over the objective" \
        grep -q "^kafka-streams.restore-time	orders-enricher-.*-StreamThread-1/0_0	warning	" "$dialect.tsv"
    check "$dialect: the store's RocksDB health" \
        grep -q "^kafka-streams.rocksdb-health	orders-enricher-.*/0_0/orders-store	warning	" "$dialect.tsv"
done
E2E_OUT=micrometer.tsv
check "JMX and Strimzi scrapes give the same findings" cmp -s jmx.tsv strimzi.tsv
check "JMX and Micrometer scrapes give the same findings" cmp -s jmx.tsv micrometer.tsv

"$bin" analyze --no-config --format json --deterministic "$fx/samza" >samza.json 2>samza.err
check "Samza dump: analyzed (exit 0)" test $? = 0
findings samza.json >samza.tsv
E2E_OUT=samza.tsv
check "Samza: the store's restore time (measured) is over the objective" \
    grep -q "^kafka-streams.restore-time	samza-container-0/Partition 0	warning	" samza.tsv
check "Samza: no standby task for a large store" \
    grep -q "^kafka-streams.standbys	samza-container-0/Partition 0	warning	" samza.tsv

# quiet: the same application with no state metrics (only its threads'
# idle and checkpoint ratios) gets no state finding
grep -E '^kafka_streams_stream_state_updater_metrics_(idle|checkpoint)_ratio' \
    "$fx/kafka-streams-jmx/scrape-1764583200.prom" >quiet.prom
"$bin" analyze --no-config --format json --deterministic quiet.prom >quiet.json 2>quiet.err
check "no state metrics: analyzed (exit 0)" test $? = 0
findings quiet.json >quiet.tsv
E2E_OUT=quiet.tsv
check "no state metrics: a kafka-streams run all the same" \
    test "$(python3 -c 'import json,sys; print([r["source"] for r in json.load(open(sys.argv[1]))["runs"]])' quiet.json)" = "['kafka-streams']"
check "no state metrics: no state finding" test -z "$(grep '^kafka-streams\.' quiet.tsv)"
finish
