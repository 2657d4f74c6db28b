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
# Environment: WORKERS (default 2), ANALYSIS_MEMORY (default 1g), QUEUE
# (default 2 x CLIENTS: no 429; smaller: clients wait Retry-After and retry).
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-/tmp/optipipe-serve-bench}
clients=${3:-4}
rounds=${4:-25}
pairs=${5:-3}
workers=${WORKERS:-2}
amem=${ANALYSIS_MEMORY:-1g}
queue=${QUEUE:-$((clients * 2))}
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
    --queue "$queue" --analysis-memory "$amem" 2>serve.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
port=
end=$((SECONDS + 300)) # ready: the one line it prints (300 s: a safety net)
while [ "$SECONDS" -lt "$end" ]; do
    port=$(sed -n 's|^optipipe serve: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' serve.err)
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || { cat serve.err; exit 1; }
    sleep 0.05
done
[ -n "$port" ] || { echo "serve did not say it listens"; cat serve.err; exit 1; }
url=http://127.0.0.1:$port
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$pid/status; }
idle0=$(rss)

# CPU seconds of the server and every process it waited for (the workers,
# their rule workers): utime + stime + cutime + cstime of /proc/PID/stat.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13 + $14 + $15) / hz }' /proc/$pid/stat; }
cli_batch() { # cli_batch PARALLEL: n analyses, PARALLEL at a time; prints analyses/s and CPU s of each
    local p=$1
    rm -f cli.db*
    /usr/bin/time -f "%e %U %S" -o cli.time xargs -P "$p" -I{} "$bin" analyze -q --no-config \
        --no-baseline --history cli.db --format json -o /dev/null in \
        < <(seq "$n") >/dev/null 2>&1 || true
    read -r wall u s <cli.time
    echo "$(echo "$n / $wall" | bc -l) $(echo "($u + $s) / $n" | bc -l)"
}

# Warm-up: one analysis each way (page cache, the store created).
python3 "$here/serve_clients.py" "$url" "$pid" 1 1 $files >warm.json
"$bin" analyze -q --no-config --no-baseline --history cli.db --format json -o /dev/null in || true

: >pairs.txt
for p in $(seq "$pairs"); do
    c0=$(cpu)
    python3 "$here/serve_clients.py" "$url" "$pid" "$clients" "$rounds" $files >"server.$p.json"
    c1=$(cpu)
    s=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_s"])' "server.$p.json")
    read -r c ccpu < <(cli_batch 1)
    read -r cp _ < <(cli_batch "$workers")
    echo "$s $c $cp $(echo "($c1 - $c0) / $n" | bc -l) $ccpu" >>pairs.txt
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
for i, (r, (s, c, cp, scpu, ccpu)) in enumerate(zip(runs, rows)):
    print("pair %d: server %.2f/s (p50 %.3f s, p99 %.3f s, %d errors, %d x 429), "
          "CLI back to back %.2f/s, CLI x%s %.2f/s, ratio %.2f; CPU per analysis: server %.3f s, CLI %.3f s"
          % (i + 1, s, r["p50_s"], r["p99_s"], r["nerrors"], r["n429"], c, workers, cp, s / c, scpu, ccpu))
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]
lat = [x for r in runs for x in r["latencies_s"]]
lat50, lat99 = pct(lat, 50), pct(lat, 99)
ratio = med(r[0] / r[1] for r in rows)
ratio_p = med(r[0] / r[2] for r in rows)
cpu_ratio = med(r[3] / r[4] for r in rows)
tree = max(r["rss_tree_max_kib"] for r in runs)
server = max(r["rss_server_max_kib"] for r in runs)
print("%s analyses per batch, %s workers, upload %d bytes" % (n, workers, runs[0]["upload_bytes"]))
print("latency: p50 %.3f s, p99 %.3f s, max %.3f s (upload to done, all %d analyses)"
      % (lat50, lat99, max(lat), len(lat)))
print("throughput: server %.2f/s, CLI back to back %.2f/s: %.0f %% of it (target >= 80 %%); "
      "CLI x%s in parallel %.2f/s: %.0f %% of it"
      % (med(r[0] for r in rows), med(r[1] for r in rows), ratio * 100, workers,
         med(r[2] for r in rows), ratio_p * 100))
print("CPU per analysis: server + workers %.3f s, CLI %.3f s: %.2f of it (the clients' own CPU not counted)"
      % (med(r[3] for r in rows), med(r[4] for r in rows), cpu_ratio))
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
