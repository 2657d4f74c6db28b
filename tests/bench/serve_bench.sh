#!/usr/bin/env bash
# The server benchmark (docs/performance.md#the-server; not a ctest test):
# CLIENTS concurrent clients (tests/bench/serve_clients.py) each upload the
# demo bundle (fixtures/demo, every file in one multipart POST) and poll
# until the analysis is done, ROUNDS times each, against an
# `optipipe serve` on 127.0.0.1 (an ephemeral port). Reported: p50/p99
# end-to-end latency, throughput (analyses/s) against `optipipe analyze
# --history` run back to back on the same files (and, for reference, as
# many CLI processes in parallel as the server has workers), in PAIRS
# alternating batches (server, CLI, server, CLI, ...: the ratio pair by
# pair, its median quoted), the server's idle RSS after start and after
# the load, and the RSS of the server and all its workers under load
# against the bound workers x --analysis-memory.
# Usage: tests/bench/serve_bench.sh build/optipipe [WORKDIR] [CLIENTS] [ROUNDS] [PAIRS]
# Environment: WORKERS (default 2), ANALYSIS_MEMORY (default 1g).
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-/tmp/optipipe-serve-bench}
clients=${3:-4}
rounds=${4:-25}
pairs=${5:-3}
workers=${WORKERS:-2}
amem=${ANALYSIS_MEMORY:-1g}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
n=$((clients * rounds))

rm -rf "$work"
mkdir -p "$work/in"
cd "$work"
# The bundle flat, as the server's inputs/ folder holds it.
find "$src/fixtures/demo" -type f -exec cp {} in/ \;
files=$(find in -type f | sort)

"$bin" serve --listen 127.0.0.1:0 --data data --workers "$workers" \
    --queue $((clients * 2)) --analysis-memory "$amem" 2>serve.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
port=
for _ in $(seq 300); do # ready: the one line it prints (up to 30 s)
    port=$(sed -n 's|^optipipe serve: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' serve.err)
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || { cat serve.err; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "serve did not say it listens"; cat serve.err; exit 1; }
url=http://127.0.0.1:$port
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$pid/status; }
idle0=$(rss)

cli_batch() { # cli_batch PARALLEL: n analyses, PARALLEL at a time; prints analyses/s
    local p=$1 t0 t1
    rm -f cli.db*
    t0=$(date +%s.%N)
    seq "$n" | xargs -P "$p" -I{} "$bin" analyze -q --no-config --no-baseline \
        --history cli.db --format json -o /dev/null in >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    echo "$n / ($t1 - $t0)" | bc -l
}

# Warm-up: one analysis each way (page cache, the store created).
python3 "$here/serve_clients.py" "$url" "$pid" 1 1 $files >warm.json
"$bin" analyze -q --no-config --no-baseline --history cli.db --format json -o /dev/null in || true

: >pairs.txt
for p in $(seq "$pairs"); do
    python3 "$here/serve_clients.py" "$url" "$pid" "$clients" "$rounds" $files >"server.$p.json"
    s=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_s"])' "server.$p.json")
    c=$(cli_batch 1)
    cp=$(cli_batch "$workers")
    echo "$s $c $cp" >>pairs.txt
done
idle1=$(rss)

python3 - "$n" "$workers" "$amem" "$idle0" "$idle1" "$pairs" <<'PY'
import json, statistics, sys
n, workers, amem, idle0, idle1, pairs = sys.argv[1:]
units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
cap = int(amem[:-1]) * units[amem[-1].lower()] if amem[-1].isalpha() else int(amem)
rows = [list(map(float, l.split())) for l in open("pairs.txt")]
runs = [json.load(open("server.%d.json" % (i + 1))) for i in range(int(pairs))]
med = statistics.median
mib = lambda kib: kib / 1024.0
for i, (r, (s, c, cp)) in enumerate(zip(runs, rows)):
    print("pair %d: server %.2f/s (p50 %.3f s, p99 %.3f s, %d errors, %d x 429), "
          "CLI back to back %.2f/s, CLI x%s %.2f/s, ratio %.2f"
          % (i + 1, s, r["p50_s"], r["p99_s"], r["nerrors"], r["n429"], c, workers, cp, s / c))
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]
lat = [x for r in runs for x in r["latencies_s"]]
lat50, lat99 = pct(lat, 50), pct(lat, 99)
ratio = med(s / c for s, c, _ in rows)
ratio_p = med(s / cp for s, _, cp in rows)
tree = max(r["rss_tree_max_kib"] for r in runs)
server = max(r["rss_server_max_kib"] for r in runs)
print("%s analyses per batch, %s workers, upload %d bytes" % (n, workers, runs[0]["upload_bytes"]))
print("latency: p50 %.3f s, p99 %.3f s, max %.3f s (upload to done, all %d analyses)"
      % (lat50, lat99, max(lat), len(lat)))
print("throughput: server %.2f/s, CLI back to back %.2f/s: %.0f %% of it (target >= 80 %%); "
      "CLI x%s in parallel %.2f/s: %.0f %% of it"
      % (med(r[0] for r in rows), med(r[1] for r in rows), ratio * 100, workers,
         med(r[2] for r in rows), ratio_p * 100))
print("idle RSS: %.1f MiB after start, %.1f MiB after the load (target <= 20)"
      % (mib(int(idle0)), mib(int(idle1))))
print("RSS under load: server alone at most %.1f MiB; server + workers at most %.1f MiB "
      "(%d processes at most), bound %s x %s = %.0f MiB"
      % (mib(server), mib(tree), max(r["procs_max"] for r in runs), workers, amem,
         int(workers) * cap / 1048576.0))
errs = sum(r["nerrors"] for r in runs)
if errs:
    print("ERRORS: %d (first: %s)" % (errs, [e for r in runs for e in r["errors"]][:3]))
PY
