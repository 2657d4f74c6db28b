#!/usr/bin/env bash
# A job as users see it (docs/cli.md, history runs): the key the store
# lists (shop/build), the name reports show ("shop: dbt build", also after
# its source), a near miss answered with the closest ("did you mean"), and
# -o FILE for every listing (docs/history.md's trend page example). On an
# SQLite file, then on PostgreSQL (tests/lib/pg.sh: skipped with a notice
# when not installed or not compiled in).
# Usage: history_jobs.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$src/tests/lib/pg.sh"
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }

jobs_checks() { # jobs_checks STORE
local db=$1
op analyze -q --history "$db" "$src/fixtures/demo"
check "the demo is recorded" test "$rc" = 0
op history jobs --history "$db"
check "the store lists the dbt job by its key" has "$tmp/out" "shop/build"

op history runs shop/build --history "$db" --format json
check "the key finds the runs" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"] == "shop/build" and len(d["runs"]) == 7, d' "$tmp/out"
op history runs "shop: dbt build" --history "$db" --format json
check "the shown name finds the same runs" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"] == "shop/build" and len(d["runs"]) == 7, d' "$tmp/out"
check "... and the key is said" has "$tmp/err" "'shop: dbt build' is the job shop/build (its key in the run store)"
op history runs "dbt shop: dbt build" --history "$db"
check "the report's header form (source, name) works too" test "$rc" = 0
check "... its runs are listed" has "$tmp/out" "duration_ms: "

op history runs shop/buld --history "$db"
check "an unknown job is an error (exit 2)" test "$rc" = 2
check "... naming the closest job" has "$tmp/err" "no job 'shop/buld' (did you mean 'shop/build'?)"
op history runs no-such-pipeline-at-all --history "$db"
check "nothing close: exit 2, no suggestion" test "$rc" = 2
check "... and where to look" has "$tmp/err" "optipipe history jobs. lists them"

# docs/history.md: history runs ... --format html -o trend.html
op history runs nightly-orders --history "$db" --format html -o "$tmp/trend.html"
check "-o writes the trend page" test "$rc" = 0
check "... an HTML page" has "$tmp/trend.html" "<!DOCTYPE html>"
check "... nothing on stdout" test ! -s "$tmp/out"
op history jobs --history "$db" -o "$tmp/jobs.txt"
check "history jobs -o FILE" has "$tmp/jobs.txt" "nightly-orders"
op history show nightly-orders@latest --history "$db" --format json -o "$tmp/show.json"
check "history show -o FILE" json_ok "$tmp/show.json"
}

jobs_checks "$tmp/h.db"
if "$bin" history --history postgresql://nobody@127.0.0.1:1/x jobs 2>&1 |
    grep -q "not compiled in"; then
    echo "SKIP: the PostgreSQL part: this optipipe is built without PostgreSQL support"
else
    pg_start
    case $? in
    0)
        trap 'pg_stop; rm -rf "$tmp"' EXIT
        jobs_checks "$(pg_createdb jobs)"
        ;;
    77) ;; # pg.sh said why
    *) check "the PostgreSQL test server starts" false ;;
    esac
fi
finish
