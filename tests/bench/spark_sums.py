#!/usr/bin/env python3
"""Baseline (a) of tests/bench/spark_bench.sh: the per-stage-attempt sums of a
Spark event log computed with the Python standard library only, the way a
person would script it (json.loads on every line).

Usage: spark_sums.py [LOG]   (plain text; '-' or no argument reads stdin)
Prints one JSON object per stage attempt, sorted, with the same sums
opti-pipe reports (tasks that ended, failed ones included)."""
import json
import sys

FIELDS = ("executor_run_ms", "executor_cpu_ns", "gc_ms", "shuffle_read_bytes",
          "shuffle_read_records", "shuffle_write_bytes", "shuffle_write_records",
          "memory_spill_bytes", "disk_spill_bytes", "input_bytes",
          "input_records", "output_bytes", "output_records")


def main():
    src = sys.stdin if len(sys.argv) < 2 or sys.argv[1] == "-" else open(
        sys.argv[1], encoding="utf-8", errors="replace")
    stages = {}
    for line in src:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("Event") != "SparkListenerTaskEnd":
            continue
        key = (ev.get("Stage ID", 0), ev.get("Stage Attempt ID", 0))
        s = stages.setdefault(key, dict.fromkeys(FIELDS, 0) | {"tasks": 0})
        s["tasks"] += 1
        m = ev.get("Task Metrics") or {}
        sr = m.get("Shuffle Read Metrics") or {}
        sw = m.get("Shuffle Write Metrics") or {}
        im = m.get("Input Metrics") or {}
        om = m.get("Output Metrics") or {}
        s["executor_run_ms"] += m.get("Executor Run Time", 0)
        s["executor_cpu_ns"] += m.get("Executor CPU Time", 0)
        s["gc_ms"] += m.get("JVM GC Time", 0)
        s["shuffle_read_bytes"] += sr.get("Remote Bytes Read", 0) + sr.get(
            "Local Bytes Read", 0)
        s["shuffle_read_records"] += sr.get("Total Records Read", 0)
        s["shuffle_write_bytes"] += sw.get("Shuffle Bytes Written", 0)
        s["shuffle_write_records"] += sw.get("Shuffle Records Written", 0)
        s["memory_spill_bytes"] += m.get("Memory Bytes Spilled", 0)
        s["disk_spill_bytes"] += m.get("Disk Bytes Spilled", 0)
        s["input_bytes"] += im.get("Bytes Read", 0)
        s["input_records"] += im.get("Records Read", 0)
        s["output_bytes"] += om.get("Bytes Written", 0)
        s["output_records"] += om.get("Records Written", 0)
    for (sid, att) in sorted(stages):
        print(json.dumps({"stage": "stage-%d-%d" % (sid, att)} |
                         stages[(sid, att)], sort_keys=True))


if __name__ == "__main__":
    main()
