#!/usr/bin/env bash
# Replays docs/writing-rules.md word for word: every block marked
# <!-- replay: run[, exit N] --> is run (with `optipipe` meaning the binary
# under test), <!-- replay: write PATH --> blocks are written to PATH, and
# <!-- replay: output --> blocks must appear, line by line and in order, in
# the output of the command before them. Runs in a scratch folder with
# fixtures/ linked from the source tree.
# Usage: writing_rules_doc.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$src/fixtures" "$tmp/fixtures"
cd "$tmp" || exit 1
OPTIPIPE_BIN=$bin python3 - "$src/docs/writing-rules.md" <<'PY'
import os, re, subprocess, sys

doc = open(sys.argv[1], encoding="utf-8").read().split("\n")
binary = os.environ["OPTIPIPE_BIN"]
steps, i = [], 0
while i < len(doc):
    m = re.match(r"<!-- replay: (.*?) -->\s*$", doc[i])
    i += 1
    if not m:
        continue
    while i < len(doc) and not doc[i].startswith("```"):
        i += 1
    j = i + 1
    while j < len(doc) and not doc[j].startswith("```"):
        j += 1
    steps.append((m.group(1), "\n".join(doc[i + 1:j]) + "\n"))
    i = j + 1

if len(steps) < 15:
    print("FAIL: only %d replay steps found in the document" % len(steps))
    sys.exit(1)

failed, last = 0, ""
for n, (what, body) in enumerate(steps, 1):
    if what.startswith("write "):
        path = what[6:].strip()
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        open(path, "w", encoding="utf-8").write(body)
        print("ok   step %d: wrote %s" % (n, path))
    elif what.startswith("run"):
        want = 0
        m = re.search(r"exit (\d+)", what)
        if m:
            want = int(m.group(1))
        script = 'optipipe() { "%s" "$@"; }\n%s' % (binary, body)
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                           env=dict(os.environ, NO_COLOR="1"))
        last = p.stdout
        ok = p.returncode == want
        failed += not ok
        print("%s step %d: %s (exit %d)" % ("ok  " if ok else "FAIL", n,
                                            body.strip().splitlines()[0], p.returncode))
        if not ok:
            print(p.stdout[-2000:], p.stderr[-2000:])
    elif what == "output":
        have = last.split("\n")
        k, ok = 0, True
        for line in [l for l in body.split("\n") if l.strip()]:
            while k < len(have) and have[k].rstrip() != line.rstrip():
                k += 1
            if k == len(have):
                ok = False
                print("FAIL step %d: output lacks (in order): %r" % (n, line))
                break
            k += 1
        failed += not ok
        if ok:
            print("ok   step %d: output matches" % n)
        else:
            print("---- output was:\n" + last[-3000:])
    else:
        print("FAIL step %d: unknown replay step %r" % (n, what))
        failed += 1
print("%d steps, %d failed" % (len(steps), failed))
sys.exit(1 if failed else 0)
PY
