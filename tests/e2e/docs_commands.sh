#!/usr/bin/env bash
# Every `optipipe ...` example in the fenced code blocks of docs/*.md runs
# (tests/e2e/docs_commands.py says how: fixtures for the paths, a loopback
# server for serve, the reason of each one not run). First a self-test:
# a page with an unknown option, a synopsis naming an option its command
# lacks and an example that exits 2 fails the harness, naming each.
# Usage: docs_commands.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.sh"
mkdir -p "$tmp/docs"
cat >"$tmp/docs/bad.md" <<'MD'
```
optipipe history jobs
optipipe history runs nightly-orders --format html --bogus trend.html
optipipe history runs JOB [--metric NAME] [--nope]
optipipe diff nope@latest nightly-orders@latest
```
MD
OP_DOCS_DIR=$tmp/docs python3 "$here/docs_commands.py" "$@" >"$tmp/self" 2>&1
rc=$?
E2E_OUT=$tmp/self
check "self-test: a bad page fails the harness" [ "$rc" = 1 ]
check "...the unknown option" grep -q "^FAIL docs/bad.md:3: .*--bogus.*(exit 2" "$tmp/self"
check "...the synopsis naming an option the command lacks" \
    grep -q "^FAIL docs/bad.md:4: .*does not take: --nope" "$tmp/self"
check "...the example that exits 2" grep -q "^FAIL docs/bad.md:5: .*(exit 2" "$tmp/self"
check "...and runs the good one" grep -q "^ok   docs/bad.md:2: optipipe history jobs" "$tmp/self"
python3 "$here/docs_commands.py" "$@" >"$tmp/docs.out" 2>&1
rc=$?
cat "$tmp/docs.out"
E2E_OUT=$tmp/docs.out
check "every docs example runs (or is skipped with its reason)" [ "$rc" = 0 ]
finish
