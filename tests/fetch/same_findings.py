#!/usr/bin/env python3
"""same_findings.py A.json B.json: exit 0 when two `optipipe analyze
--format json` reports hold the same findings (rule, severity, run, node,
message, recommendation, evidence, changes), else print the differences
and exit 1. Input paths and timings are ignored."""
import json
import sys


def findings(path):
    with open(path) as f:
        doc = json.load(f)
    out = []
    for x in doc.get("findings", []):
        out.append(json.dumps({k: x.get(k) for k in (
            "rule", "severity", "source", "run", "node", "message",
            "recommendation", "evidence", "changes")}, sort_keys=True))
    return sorted(out)


def main():
    a, b = findings(sys.argv[1]), findings(sys.argv[2])
    if a == b:
        return 0
    for x in a:
        if x not in b:
            print("only in %s: %s" % (sys.argv[1], x))
    for x in b:
        if x not in a:
            print("only in %s: %s" % (sys.argv[2], x))
    if not a and not b:
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
