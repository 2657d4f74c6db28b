#!/usr/bin/env python3
"""figures.py [--check] BUILD_DIR - the test suite's figures, generated
rather than written down (docs/quality.md, docs/testing.md): how many ctest
tests there are, per tier label, from `ctest --show-only=json-v1` in
BUILD_DIR. --check (ctest quality/figures) also fails when a test has no
label or when a document of docs/ or README.md states a count of ctest
tests by hand (it would go stale: issue 25)."""
import json
import os
import re
import subprocess
import sys

TIERS = ("quick", "unit", "rules", "layering", "e2e", "serve", "real", "slow",
         "bench", "alloc", "fuzz", "full")


def tests_of(build):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = []
    for t in json.loads(out)["tests"]:
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        tests.append((t["name"], labels))
    return tests


def stale_counts(src):
    bad = []
    docs = [os.path.join(src, "README.md")]
    for root, _, files in os.walk(os.path.join(src, "docs")):
        docs += [os.path.join(root, f) for f in files if f.endswith(".md")]
    for path in docs:
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                if re.search(r"\b\d+ ctest tests?\b", line):
                    bad.append("%s:%d: %s" % (os.path.relpath(path, src), no, line.strip()))
    return bad


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 1:
        sys.exit(__doc__)
    tests = tests_of(args[0])
    counts = {}
    for _, labels in tests:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    print("%d ctest tests" % len(tests))
    for label in sorted(counts, key=lambda k: (TIERS.index(k) if k in TIERS else 99, k)):
        print("  %-9s %d" % (label, counts[label]))
    quick = counts.get("quick", 0)
    print("quick tier (./scripts/test --quick): %d; the rest: %d" % (quick, len(tests) - quick))
    if not check:
        return 0
    rc = 0
    for name, labels in tests:
        if not labels:
            print("FAIL: %s has no label (tests/CMakeLists.txt \"Tiers\")" % name)
            rc = 1
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for line in stale_counts(src):
        print("FAIL: a count written by hand (print it with tests/figures.py): " + line)
        rc = 1
    if not tests or quick == 0 or quick == len(tests):
        print("FAIL: the quick tier is empty or everything")
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
