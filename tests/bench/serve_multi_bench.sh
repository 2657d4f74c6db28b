#!/usr/bin/env bash
# Two `optipipe serve` instances on one PostgreSQL store and one DATA
# against one instance (docs/performance.md "Several instances"; issue 29),
# under the same CLIENTS concurrent clients (tests/bench/serve_clients.py:
# each uploads the demo bundle and polls until its analysis is done,
# ROUNDS times; with two instances client k talks to instance k mod 2, as
# a round-robin balancer sends it). Each instance has WORKERS worker
# slots, so two have twice the slots of one. In PAIRS alternating batches
# (one, two, one, two, ...), each on a fresh database and DATA: p50/p99
# latency (upload to done), throughput (analyses/s), and nothing lost:
# every analysis of the batch done, the store's analyses table holding
# exactly that many rows, all done. The PostgreSQL server is a throw-away
# one (tests/lib/pg.sh), on this machine, over loopback TCP.
# Usage: tests/bench/serve_multi_bench.sh build/optipipe [WORKDIR] [CLIENTS] [ROUNDS] [PAIRS]
# Environment: WORKERS (per instance, default 1), QUEUE (default 2 x CLIENTS).
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-/tmp/optipipe-serve-multi-bench}
clients=${3:-4}
rounds=${4:-10}
pairs=${5:-3}
workers=${WORKERS:-1}
queue=${QUEUE:-$((clients * 2))}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
n=$((clients * rounds))
. "$here/../lib/pg.sh"
if "$bin" history --history postgresql://nobody@127.0.0.1:1/x jobs 2>&1 |
    grep -q "not compiled in"; then
    echo "SKIP: this optipipe is built without PostgreSQL support" >&2
    exit 77
fi
set +e
pg_start
rc=$?
set -e
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "serve_multi_bench: the PostgreSQL server did not start" >&2; exit 1; }
PIDS=""
stop_all() {
    local p
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    PIDS=""
}
trap 'stop_all; pg_stop' EXIT
rm -rf "$work"
mkdir -p "$work/in"
cd "$work"
find "$src/fixtures/demo" -type f -exec cp {} in/ \;
files=$(find in -type f | sort)
export TOKEN=multi-bench-token-0123456789abcdef
printf '%s\n' "$TOKEN" >tokens
chmod 600 tokens

# start DATA URI NAME: one instance; its URL and pid into NAME.url, NAME.pid
start() {
    : >"$3.err"
    "$bin" serve --listen 127.0.0.1:0 --data "$1" --store "$2" --token-file tokens \
        --workers "$workers" --queue "$queue" -q 2>"$3.err" &
    local pid=$! port="" end=$((SECONDS + 300)) # 300 s: a safety net
    PIDS="$PIDS $pid"
    while [ "$SECONDS" -lt "$end" ]; do
        port=$(sed -n 's|^optipipe serve: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$3.err" 2>/dev/null || true)
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$3.err" >&2; exit 1; }
        sleep 0.05
    done
    [ -n "$port" ] || { echo "serve did not say it listens" >&2; exit 1; }
    echo "http://127.0.0.1:$port" >"$3.url"
    echo "$pid" >"$3.pid"
}
psql_q() { PGPASSFILE=$PGPASSFILE "$(pg_bin)/psql" -At "$1" -c "$2"; }

# batch MODE K: K instances (1 or 2) on a fresh DATA and database; the
# clients' JSON into MODE.P.json, the table's counts into MODE.P.rows
batch() {
    local mode=$1 k=$2 p=$3 uri urls="" pids="" i
    uri=$(pg_createdb "${mode}_$p")
    for i in $(seq "$k"); do
        start "data.$mode.$p" "$uri" "$mode.$p.$i"
        urls="$urls,$(cat "$mode.$p.$i.url")"
        pids="$pids,$(cat "$mode.$p.$i.pid")"
    done
    python3 "$here/serve_clients.py" "${urls#,}" "${pids#,}" "$clients" "$rounds" $files >"$mode.$p.json"
    psql_q "$uri" "select count(*), count(*) filter (where state = 'done') from analyses" >"$mode.$p.rows"
    stop_all
}

batch warm 2 0 # warm-up: page cache, the binary, the server's first database
for p in $(seq "$pairs"); do
    batch one 1 "$p"
    batch two 2 "$p"
done

python3 - "$n" "$workers" "$pairs" <<'PY'
import json, statistics, sys
n, workers, pairs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
med = statistics.median
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]
lost = 0
res = {}
for mode in ("one", "two"):
    runs = [json.load(open("%s.%d.json" % (mode, p + 1))) for p in range(pairs)]
    rows = [open("%s.%d.rows" % (mode, p + 1)).read().strip().split("|") for p in range(pairs)]
    for p, (r, (nrows, ndone)) in enumerate(zip(runs, rows)):
        bad = r["analyses"] != n or r["nerrors"] or int(nrows) != n or int(ndone) != n
        lost += bad
        print("pair %d, %s instance%s: %.2f analyses/s, p50 %.3f s, p99 %.3f s, "
              "%d/%d done, %d errors, %d x 429; the table: %s rows, %s done%s"
              % (p + 1, mode, "s" if mode == "two" else "", r["per_s"], r["p50_s"] or 0,
                 r["p99_s"] or 0, r["analyses"], n, r["nerrors"], r["n429"], nrows, ndone,
                 "  LOST OR FAILED" if bad else ""))
    lat = [x for r in runs for x in r["latencies_s"]]
    res[mode] = (med(r["per_s"] for r in runs), pct(lat, 50), pct(lat, 99), runs)
ratio = med(t["per_s"] / o["per_s"] for o, t in zip(res["one"][3], res["two"][3]))
print("%d analyses per batch (%s clients), %s worker%s per instance"
      % (n, res["one"][3][0]["clients"], workers, "" if workers == "1" else "s"))
for mode in ("one", "two"):
    per_s, p50, p99, _ = res[mode]
    print("%s instance%s: %.2f analyses/s, latency p50 %.3f s, p99 %.3f s (median batch; all batches' latencies)"
          % (mode, "s" if mode == "two" else "", per_s, p50, p99))
print("two / one throughput: %.2f (median of the pair ratios)" % ratio)
print("nothing lost: %s" % ("yes, every analysis of every batch done and in the table once"
                            if not lost else "NO: %d batches lost or failed analyses" % lost))
sys.exit(1 if lost else 0)
PY
