#!/usr/bin/env python3
"""check_exports.py list FIXTURE...   prints "NAME JOB_ID SAMPLES" per fixture
   check_exports.py check DIR NAME...  for each NAME compares DIR/NAME.fixture.json
   and DIR/NAME.fetched.json (`analyze --format json` reports) and the export
   DIR/NAME.export.json with its fixture DIR/NAME.src; prints PASS/FAIL lines.

One Python start for all fixtures of tests/e2e/fetch_flink.sh."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_findings import findings  # noqa: E402


def job_of(doc):
    return [k for k in doc["responses"] if re.fullmatch(r"/jobs/[0-9a-f]+", k)][0][6:]


def cmd_list(paths):
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        name = os.path.basename(p)[:-5]
        print(name, job_of(d), len(d.get("samples", [])))


def result(ok, what):
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def cmd_check(d, names):
    for n in names:
        base = os.path.join(d, n)
        try:
            with open(base + ".export.json") as f:
                ex = json.load(f)
            with open(open(base + ".src").read().strip()) as f:
                fx = json.load(f)
        except (OSError, ValueError) as e:
            result(False, "%s: export readable (%s)" % (n, e))
            continue
        result(ex.get("flink_rest_export") == 1, "%s: a flink_rest_export" % n)
        result(len(ex.get("samples", [])) == len(fx.get("samples", [])),
               "%s: one sample per fixture sample" % n)
        result(not ex.get("errors"), "%s: no errors listed" % n)
        a, b = findings(base + ".fixture.json"), findings(base + ".fetched.json")
        result(a == b, "%s: same findings as the fixture (%d)" % (n, len(a)))
        if a != b:
            for x in a:
                if x not in b:
                    print("  only in the fixture: " + x)
            for x in b:
                if x not in a:
                    print("  only in the export: " + x)


if __name__ == "__main__":
    if sys.argv[1] == "list":
        cmd_list(sys.argv[2:])
    else:
        cmd_check(sys.argv[2], sys.argv[3:])
