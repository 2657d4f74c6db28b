#!/usr/bin/env bash
# Holds docs/security.md to its word: every test it cites as the proof of a
# limit must exist - e2e/NAME and unit/test_NAME files, `test_fn` cmocka
# cases (a trailing * matches a family), bad-inputs case names written by
# tests/bad-inputs/gen.py, tests/bench scripts and tests/e2e/*.py harnesses.
# Usage: security_doc.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
src=$2
python3 - "$src" <<'PY'
import glob, os, re, sys

src = sys.argv[1]
doc = open(os.path.join(src, "docs/security.md"), encoding="utf-8").read()
units = "".join(open(p, encoding="utf-8").read()
                for p in glob.glob(os.path.join(src, "tests/unit/*.c")))
gen = open(os.path.join(src, "tests/bad-inputs/gen.py"), encoding="utf-8").read()
bad, seen = [], 0

def need(ok, what):
    global seen
    seen += 1
    if not ok:
        bad.append(what)

for name in set(re.findall(r"(?<!tests/)\be2e/([a-z_]+)\b(?!\.)", doc)):
    need(os.path.exists(os.path.join(src, "tests/e2e", name + ".sh")), "e2e/" + name)
for name in set(re.findall(r"\bunit/(test_[a-z_]+)\b", doc)):
    need(os.path.exists(os.path.join(src, "tests/unit", name + ".c")), "unit/" + name)
for name in set(re.findall(r"`(test_[a-z_]+\*?)`", doc)):
    pat = re.escape(name.rstrip("*")) + (r"\w*" if name.endswith("*") else r"\b")
    need(re.search(r"cmocka_unit_test\w*\(" + pat, units), "cmocka case " + name)
for names in re.findall(r"bad-inputs ((?:`[^`]+`(?:, | and )?)+)", doc):
    for name in re.findall(r"`([^`]+)`", names):
        pat = re.escape(name).replace(r"\*", r"[^\"]*")
        need(re.search(r"[\"']" + pat + r"[\"']", gen), "bad-inputs case " + name)
for path in set(re.findall(r"\b(tests/(?:bench|e2e|fetch|lua)/[\w./-]+\w)", doc)):
    need(glob.glob(os.path.join(src, path)), path)

for what in sorted(bad):
    print("FAIL: docs/security.md cites %s, which does not exist" % what)
print("%d passed, %d failed" % (seen - len(bad), len(bad)))
sys.exit(1 if bad else 0)
PY
