#!/usr/bin/env python3
"""Turns `optipipe normalize --format json` output into a Lua chunk that
returns the first run as plain tables (the shape rules see, by_id included),
for the plain-Lua reference of tests/bench/engine.sh.
Usage: model_to_lua.py NORMALIZED.json OUT.lua"""
import json
import math
import sys


def lua(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else "0/0"
    if isinstance(v, str):
        return '"' + "".join(c if 32 <= b < 127 and c not in '"\\' else "\\%03d" % b
                             for b in v.encode() for c in [chr(b)]) + '"'
    if isinstance(v, list):
        return "{" + ",".join(lua(x) for x in v) + "}"
    return "{" + ",".join("[%s]=%s" % (lua(k), lua(x)) for k, x in v.items()) + "}"


run = json.load(open(sys.argv[1]))["runs"][0]
nodes = run.pop("nodes", [])
with open(sys.argv[2], "w") as f:
    f.write("local run = %s\nrun.nodes, run.by_id = {}, {}\n" % lua(run))
    for n in nodes:
        for k in ("parents", "children"):
            n.setdefault(k, [])
        for k in ("metrics", "dist", "attrs"):
            n.setdefault(k, {})
        f.write("do local n = %s; run.nodes[#run.nodes + 1] = n; run.by_id[n.id] = n end\n"
                % lua(n))
    f.write("return run\n")
