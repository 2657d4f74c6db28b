#!/usr/bin/env python3
"""Writes the engine benchmark's inputs: a Flink REST export with one job of
N vertices (a chain with fan-in every 10th vertex) and M generated rules that
each walk every node. Usage: gen_engine_bundle.py OUT_DIR [NODES] [RULES]"""
import json
import os
import sys

out = sys.argv[1]
nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
rules = int(sys.argv[3]) if len(sys.argv) > 3 else 50
os.makedirs(os.path.join(out, "rules"), exist_ok=True)

jid = "b" * 32
vertices, plan_nodes = [], []
for i in range(nodes):
    vid = "%032x" % (i + 1)
    vertices.append({
        "id": vid, "name": "Operator %d" % i, "parallelism": 4, "maxParallelism": 128,
        "status": "RUNNING", "start-time": 1700000000000, "end-time": -1, "duration": 3600000,
        "tasks": {"RUNNING": 4},
        "metrics": {"read-bytes": i * 1000, "read-bytes-complete": True,
                    "write-bytes": i * 900, "write-bytes-complete": True,
                    "read-records": i * 10, "read-records-complete": True,
                    "write-records": i * 9, "write-records-complete": True,
                    "accumulated-busy-time": 1000.0 * (i % 7),
                    "accumulated-backpressured-time": 100.0 * (i % 3),
                    "accumulated-idle-time": 500.0}})
    node = {"id": vid, "parallelism": 4, "operator": "", "operator_strategy": "",
            "description": "Operator %d" % i, "optimizer_properties": {}}
    if i > 0:
        node["inputs"] = [{"num": 0, "id": "%032x" % i, "ship_strategy": "FORWARD",
                           "exchange": "pipelined_bounded"}]
        if i % 10 == 0 and i > 10:
            node["inputs"].append({"num": 1, "id": "%032x" % (i - 9),
                                   "ship_strategy": "HASH", "exchange": "pipelined_bounded"})
    plan_nodes.append(node)

job = {"jid": jid, "name": "bench job", "isStoppable": False, "state": "RUNNING",
       "start-time": 1700000000000, "end-time": -1, "duration": 3600000, "now": 1700003600000,
       "timestamps": {"RUNNING": 1700000000000, "CREATED": 1699999999000},
       "vertices": vertices, "status-counts": {"RUNNING": nodes},
       "plan": {"jid": jid, "name": "bench job", "type": "STREAMING", "nodes": plan_nodes}}
export = {"flink_rest_export": 1, "base_url": "http://bench:8081",
          "captured_at_ms": 1700003600000,
          "responses": {"/jobs/%s" % jid: job, "/jobs/%s/plan" % jid: {"plan": job["plan"]}}}
with open(os.path.join(out, "bundle.json"), "w") as f:
    json.dump(export, f)

RULE = '''-- generated benchmark rule %(i)d: the shape of a typical rule, walking
-- every node, reading a few fields, and reporting on the worst
return {
  id = "bench.rule-%(i)02d", title = "Benchmark rule %(i)d", severity = "info",
  sources = { "flink" }, options = { threshold = %(thr)d },
  check = function(run, ctx)
    local worst, worst_v = nil, -1
    for _, node in ipairs(run.nodes) do
      local m = node.metrics
      local v = (m.records_in or 0) + #node.parents + (node.parallelism or 0)
      if v > worst_v then worst, worst_v = node, v end
    end
    if worst and worst_v > ctx.options.threshold and %(i)d %% 10 == 0 then
      ctx.report { node = worst.id, message = string.format("largest value %%d", worst_v) }
    end
  end,
}
'''
for i in range(rules):
    with open(os.path.join(out, "rules", "rule_%02d.lua" % i), "w") as f:
        f.write(RULE % {"i": i, "thr": i})
