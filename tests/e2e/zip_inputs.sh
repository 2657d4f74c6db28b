#!/usr/bin/env bash
# A .zip given to analyze / normalize (core/input_zip.c, core/unzip.c):
# read as the folder it holds - a Databricks rollover folder, a Spark
# rolling event-log folder, a dbt target/ - with messages naming the zip
# and the member; hostile archives (names escaping the folder, a symlink
# member, a compression bomb, too many members) refused member by member
# or whole, the other members still read, nothing written outside the
# private temporary folder, which is removed at the end. The zips are made
# here (python3 zipfile) from fixtures and from the real Databricks log
# under REAL_DIR (skipped with a notice when absent).
# Usage: zip_inputs.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=$3/spark/platforms/databricks_example_1
. "$(dirname "$0")/lib/check.sh"

mkdir -p "$tmp/t"
export TMPDIR=$tmp/t # the private folders land here: checked empty below

# zipdir DIR ZIP [PREFIX]: DIR's files into ZIP (deflated), under PREFIX/
zipdir() {
    python3 - "$@" <<'PY'
import os, sys, zipfile
d, out = sys.argv[1], sys.argv[2]
pre = sys.argv[3] + "/" if len(sys.argv) > 3 else ""
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(d):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, pre + os.path.relpath(p, d))
PY
}
json_get() {
    python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PY
}
is() { # is FILE EXPR EXPECTED
    local got
    got=$(json_get "$1" "$2" 2>&1)
    [ "$got" = "$3" ] || { echo "  $2 = $got, expected $3"; return 1; }
}
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
no_tmp_left() { [ -z "$(ls -A "$tmp/t")" ]; }
counts="[(r['id'], r['metrics'].get('jobs'), r['metrics'].get('stages'), r['metrics'].get('tasks')) for r in d['runs']]"

# --- the demo fixtures: the same report as the folder -----------------------
zipdir "$src/fixtures/demo" "$tmp/demo.zip"
"$bin" analyze "$src/fixtures/demo" >"$tmp/dir.txt" 2>"$tmp/dir.err"
run analyze "$tmp/demo.zip"
check "demo.zip: exit 0" test "$rc" = 0
check "demo.zip: the same report as the folder" cmp -s "$tmp/dir.txt" "$tmp/out"
check "demo.zip: the temporary folder is removed" no_tmp_left
run normalize --format json "$tmp/demo.zip"
check "demo.zip: runs' origins name the zip and the member" \
    is "$tmp/out" "sorted(o for r in d['runs'] for o in r['origins'])[0]" "$tmp/demo.zip/dbt/run_results-2024-05-01.json"

# --- a dbt target/ ------------------------------------------------------------
mkdir -p "$tmp/target"
cp "$src/fixtures/demo/dbt/manifest.json" "$src/fixtures/demo/dbt/run_results-2024-05-01.json" "$tmp/target/"
zipdir "$tmp/target" "$tmp/target.zip" target
"$bin" normalize --format json "$tmp/target" >"$tmp/a.json" 2>/dev/null
run normalize --format json "$tmp/target.zip"
check "dbt target.zip: exit 0" test "$rc" = 0
check "dbt target.zip: the runs of the folder" \
    is "$tmp/out" "len(d['runs']), d['runs'][0]['id'], len(d['runs'][0]['nodes'])" \
    "$(json_get "$tmp/a.json" "len(d['runs']), d['runs'][0]['id'], len(d['runs'][0]['nodes'])")"

# --- a Databricks rollover folder ---------------------------------------------
python3 "$src/fixtures/spark/gen_platforms.py" rollover "$tmp/ro"
zipdir "$tmp/ro/set" "$tmp/ro.zip"
run normalize --format json "$tmp/ro.zip"
check "rollover zip: one run, every job, stage and task" is "$tmp/out" "$counts" \
    "[('app-20240101090000-0000', 6, 6, 24)]"
check "rollover zip: the run is the zip" is "$tmp/out" "d['runs'][0]['origins']" "['$tmp/ro.zip']"
OPTIPIPE_PROGRESS=always "$bin" analyze "$tmp/ro.zip" >/dev/null 2>"$tmp/err"
tr '\r' '\n' <"$tmp/err" >"$tmp/lines"
check "rollover zip: the bar shows the zip, not the temporary folder" \
    bash -c "grep -q '^\[1/1\] ro.zip ' '$tmp/lines' && ! grep -q optipipe-zip '$tmp/err'"
check "rollover zip: [n/N] counts the 3 parts once (no [n/3])" bash -c "! grep -q '/3\]' '$tmp/lines'"

# --- a Spark rolling event-log folder ------------------------------------------
roll=$tmp/r/eventlog_v2_app-1
mkdir -p "$roll"
cp "$src/fixtures/spark/gc.zstd" "$roll/events_1_app-1.zstd"
: >"$roll/appstatus_app-1"
zipdir "$tmp/r" "$tmp/rolling.zip"
"$bin" normalize --format json "$src/fixtures/spark/gc.zstd" >"$tmp/a.json" 2>/dev/null
run normalize --format json "$tmp/rolling.zip"
check "rolling zip: the run of its events file" is "$tmp/out" "$counts" "$(json_get "$tmp/a.json" "$counts")"
check "rolling zip: read as the folder" is "$tmp/out" "d['runs'][0]['origins']" "['$tmp/rolling.zip/eventlog_v2_app-1']"

# --- a member's problem names the zip and the member ---------------------------
mkdir -p "$tmp/m"
printf '{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}\n{"Event":' >"$tmp/m/cut.log"
zipdir "$tmp/m" "$tmp/m.zip"
run analyze "$tmp/m.zip"
check "a cut member: named as zip/member" has "$tmp/err" "$tmp/m.zip/cut.log: warning: in progress or cut"
check "... no temporary path in any message" bash -c "! grep -q optipipe-zip '$tmp/err'"
check "... the temporary folder is removed" no_tmp_left

# --- hostile archives -------------------------------------------------------------
python3 - "$tmp" <<'PY'
import sys, zipfile
t = sys.argv[1]
ok = open(t + "/m/cut.log", "rb").read()
def z(name, members, mode=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(t + "/" + name, "w", mode) as f:
        for n, data, attr in members:
            i = zipfile.ZipInfo(n)
            i.compress_type = mode
            if attr:
                i.create_system = 3
                i.external_attr = attr << 16
            f.writestr(i, data)
z("slip.zip", [("../escaped.txt", b"x\n", 0), ("a/../../escaped2.txt", b"x\n", 0),
               ("/abs-escaped.txt", b"x\n", 0), ("good.log", ok, 0)])
z("link.zip", [("link", "/etc/passwd", 0o120777), ("good.log", ok, 0)])
z("bomb.zip", [("bomb.log", b"\0" * (50 << 20), 0), ("good.log", ok, 0)])
with zipfile.ZipFile(t + "/many.zip", "w", zipfile.ZIP_STORED) as f:
    for k in range(100001):
        f.writestr("f%d" % k, b"")
open(t + "/fake.zip", "wb").write(b"PK\3\4 not really a zip")
PY
run analyze "$tmp/slip.zip"
check "zip-slip: no crash; exit 0 as the good member is read (as for any input error)" test "$rc" = 0
check "zip-slip: nothing outside" test ! -e "$tmp/escaped.txt" -a ! -e "$tmp/t/escaped.txt" -a ! -e "$tmp/escaped2.txt" -a ! -e /abs-escaped.txt
check "zip-slip: the zip and the member named" has "$tmp/err" "slip.zip: error: member '../escaped.txt' not read: not a plain relative path"
check "zip-slip: ... each of them" has "$tmp/err" "member 'a/../../escaped2.txt' not read"
check "zip-slip: ... an absolute name too" has "$tmp/err" "member '/abs-escaped.txt' not read"
check "zip-slip: the good member is still read" has "$tmp/err" "slip.zip/good.log"
run analyze "$tmp/link.zip"
check "symlink member: refused, named" has "$tmp/err" "link.zip: error: member 'link' not read: not a regular file (a symlink?)"
check "symlink member: the good member is still read" has "$tmp/err" "link.zip/good.log"
run analyze "$tmp/bomb.zip"
check "bomb: refused by the 100:1 ratio cap" has "$tmp/err" "bomb.zip: error: member 'bomb.log' not read: it claims 52428800 bytes from"
check "bomb: ... naming the cap" has "$tmp/err" "compression ratio cap of 100:1"
check "bomb: the good member is still read" has "$tmp/err" "bomb.zip/good.log"
run analyze "$tmp/many.zip" "$tmp/m/cut.log"
check "too many members: refused whole" has "$tmp/err" "many.zip: error: a zip archive of more than 100000 members (the cap); nothing unpacked"
check "too many members: the other input is read" has "$tmp/err" "cut.log"
run analyze "$tmp/fake.zip"
check "not a zip: named" has "$tmp/err" "fake.zip: error: not a readable zip archive"
mkdir -p "$tmp/nest/in"
cp "$tmp/ro.zip" "$tmp/nest/in/"
zipdir "$tmp/nest/in" "$tmp/nest.zip"
run analyze "$tmp/nest.zip"
check "a zip inside a zip is not opened, and says so" has "$tmp/err" "nest.zip/ro.zip: error: a zip inside a zip archive is not opened"
check "after all of them: no temporary folder left" no_tmp_left

# --- the real Databricks rollover, zipped ---------------------------------------------
if [ -d "$real" ]; then
    zipdir "$real" "$tmp/db.zip"
    run normalize --format json "$tmp/db.zip"
    check "real databricks zip: one run, 72 jobs, 72 stages, 8247 tasks, no orphan" is "$tmp/out" \
        "[(len(d['runs']),) + tuple(r['metrics'][k] for k in ('jobs', 'stages', 'tasks', 'orphan_task_ends')) for r in d['runs']]" \
        "[(1, 72, 72, 8247, 0)]"
else
    echo "NOTICE: $real absent: the real Databricks zip was not checked"
fi

finish
