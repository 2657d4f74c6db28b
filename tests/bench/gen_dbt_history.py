#!/usr/bin/env python3
"""dbt history benchmark inputs: one project of N models built nightly for
D+1 nights (run_results-2024-05-DD.json, one per night, and the newest
night's manifest.json via fixtures/dbt/gen.py). Node timings come from a
plain 16-thread list scheduler with ±10 % nightly jitter (gen.py's full
DAG simulation takes minutes at 10 000 models; a benchmark needs volume,
not a realistic critical path).

Usage: gen_dbt_history.py OUTDIR [--models 10000] [--nights 30]
(tests/bench/history_bench.sh; the last night is the one analyzed.)
"""
import argparse
import heapq
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fixtures", "dbt"))
import gen  # noqa: E402

THREADS = 16


def project(n, seed=7):
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        name = ("stg_%05d" if i < n // 10 else "fct_%05d") % i
        deps = []
        if i >= n // 10:
            lo = max(0, i - 200)
            deps = sorted({nodes[rng.randrange(lo, i)].name for _ in range(2)})
        nodes.append(gen.Node("model", name, secs=0.5 + rng.random() * 20,
                              mat="table" if i % 3 else "view", deps=deps,
                              compile_s=0.01))
    return nodes


def night(nodes, day, seed):
    rng = random.Random(seed)
    t0 = gen.day_start(day) + 3.2
    free = [(t0, k) for k in range(THREADS)]
    heapq.heapify(free)
    results, end = [], t0
    for n in nodes:
        start, k = heapq.heappop(free)
        secs = n.secs * (0.9 + 0.2 * rng.random())
        done = start + 0.01 + secs
        heapq.heappush(free, (done, k))
        end = max(end, done)
        results.append({
            "status": "success",
            "timing": [{"name": "compile", "started_at": gen.iso(start),
                        "completed_at": gen.iso(start + 0.01)},
                       {"name": "execute", "started_at": gen.iso(start + 0.01),
                        "completed_at": gen.iso(done)}],
            "thread_id": "Thread-%d (worker)" % (k + 1),
            "execution_time": round(secs + 0.01, 6),
            "adapter_response": {"_message": "CREATE TABLE", "code": "CREATE TABLE"},
            "message": "CREATE TABLE", "failures": None, "unique_id": n.uid,
            "compiled": True, "compiled_code": "select 1",
            "relation_name": "`acme-analytics`.`analytics`.`%s`" % n.name,
            "batch_results": None})
    inv = gen.inv_id("bench", str(day))
    doc = {"metadata": {"dbt_schema_version": gen.SCHEMA.format("run-results", "v6"),
                        "dbt_version": gen.DBT_VERSION,
                        "generated_at": gen.iso(end + 0.8), "invocation_id": inv,
                        "invocation_started_at": gen.iso(t0 - 3.2), "env": {}},
           "results": results, "elapsed_time": round(end + 0.8 - t0 + 2.4, 6),
           "args": {"which": "build", "invocation_command": "dbt build --threads 16",
                    "full_refresh": False, "target": "prod", "select": [],
                    "exclude": [], "vars": {}, "threads": THREADS,
                    "project_dir": "/opt/airflow/dbt/shop",
                    "profiles_dir": "/opt/airflow/dbt"}}
    return doc, inv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", type=int, default=10000)
    ap.add_argument("--nights", type=int, default=30)
    a = ap.parse_args()
    if a.nights + 1 > 31:
        sys.exit("at most 30 earlier nights (one month of dates)")
    nodes = project(a.models)
    inv = None
    for day in range(1, a.nights + 2):
        doc, inv = night(nodes, day, day)
        gen.write(os.path.join(a.out, "run_results-2024-05-%02d.json" % day), doc)
    gen.write(os.path.join(a.out, "manifest.json"),
              gen.manifest(nodes, inv, a.nights + 1))


if __name__ == "__main__":
    main()
