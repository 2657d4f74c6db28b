#!/usr/bin/env bash
# The run store from the command line (docs/history.md): analyze --history
# records (and the same run twice is replaced), OPTIPIPE_HISTORY and the
# config's `history` name it, a corrupt or foreign file or a newer schema
# is an error naming it while the analysis is still printed (exit 6: not
# recorded), two analyze
# processes share one store, `history jobs|runs|show|prune` in text and
# JSON, and the rule-test harness's `history` field with decisions.
# Usage: history_store.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=out
E2E_ERR=err
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
cd "$tmp" || exit 1
op() { "$bin" "$@" >out 2>err; rc=$?; }
nights=$src/fixtures/spark-nightly/steady
dbt=$src/fixtures/dbt/regression
runs_in() { # runs_in STORE: how many runs it holds
    "$bin" history --history "$1" jobs --format json |
        python3 -c 'import json,sys; print(sum(j["runs"] for j in json.load(sys.stdin)))'
}

op analyze --no-config --no-baseline --history s.db "$src/fixtures/demo"
check "analyze --history records every run" [ "$rc" = 0 ]
check "it says how many" has err "s.db: recorded 9 runs"
check "the store is private to its owner" [ "$(stat -c %a s.db)" = 600 ]
check "9 runs stored" [ "$(runs_in s.db)" = 9 ]
op analyze --no-config --no-baseline --history s.db "$src/fixtures/demo"
check "the same runs again are replaced, not added" [ "$(runs_in s.db)" = 9 ]

op history --history s.db jobs
check "history jobs lists each job" has out "spark .* nightly-orders"
check "...with its run count" has out "dbt .* 7 runs .* shop/build"
op history --history s.db jobs --format json
check "history jobs --format json is JSON" json_ok out

for n in 01 02 03 04; do
    "$bin" analyze -q --no-config --no-baseline --history n.db "$nights/night-$n.log.gz" >/dev/null 2>&1
done
op history --history n.db runs nightly-orders
check "history runs: newest first" has out "application_1700000000000_0304"
check "...with a sparkline of duration_ms" has out "duration_ms: [▁▂▃▄▅▆▇█]\{4\}  min"
op history --history n.db runs nightly-orders --metric jobs_wall_ms --format json
check "history runs --format json is JSON" json_ok out
check "...with the chosen metric" has out '"jobs_wall_ms": [0-9]'
op history --history n.db show nightly-orders@previous
check "history show JOB@previous" has out "application_1700000000000_0303"
check "...lists its findings" has out "spark.config"
op history --history n.db show application_1700000000000_0301 --format json
check "history show RUN --format json" json_ok out
check "...holds the content hash" has out '"content_hash": "[0-9a-f]\{16\}"'
op history --history n.db show nothing-like-this
check "an unknown run: exit 3, named" [ "$rc" = 3 ] && has err "no stored run 'nothing-like-this'"

# where the store comes from
OPTIPIPE_HISTORY=env.db "$bin" analyze -q --no-config --no-baseline "$nights/night-01.log.gz" >/dev/null 2>&1
check "OPTIPIPE_HISTORY names the store" [ "$(runs_in env.db)" = 1 ]
mkdir -p cfg && printf 'return { history = "cfg.db" }\n' >cfg/optipipe.lua
(cd cfg && "$bin" analyze -q --no-baseline "$nights/night-01.log.gz" >/dev/null 2>&1)
check "the config's history, relative to the config" [ "$(runs_in cfg/cfg.db)" = 1 ]
OPTIPIPE_HISTORY=env.db "$bin" history jobs --no-config >out 2>err
check "history commands find OPTIPIPE_HISTORY too" has out nightly-orders
op history jobs --no-config
check "no store anywhere: a usage error saying how" [ "$rc" = 2 ] && has err "no run store"

# bad stores: the analysis is still printed
printf 'not a database at all, just some text that is long enough\n%.0s' 1 2 3 >junk.db
op analyze --no-config --no-baseline --history junk.db "$nights/night-01.log.gz"
check "a corrupt store: exit 6 (not recorded), report printed" [ "$rc" = 6 ] && has out "spark.config"
check "...and an error naming it" has err "junk.db: not a run store"
check "...the file is left as it was" has junk.db "not a database"
python3 -c 'import sqlite3; c=sqlite3.connect("other.db"); c.execute("create table t(x)"); c.commit()'
op analyze --no-config --no-baseline --history other.db "$nights/night-01.log.gz"
check "another application's SQLite file is refused (exit 6)" [ "$rc" = 6 ] && has err "other.db: an SQLite database, but not an opti-pipe run store"
check "...the report still printed" has out "spark.config"
cp n.db newer.db
python3 -c 'import sqlite3; c=sqlite3.connect("newer.db"); c.execute("pragma user_version = 7"); c.commit()'
op analyze --no-config --no-baseline --history newer.db "$nights/night-05.log.gz"
check "a newer schema is refused with a message (exit 6)" [ "$rc" = 6 ] && has err "newer.db: run store schema 7 is newer than this optipipe"
check "...and nothing is written into it" [ "$(python3 -c 'import sqlite3; print(sqlite3.connect("newer.db").execute("select count(*) from runs").fetchone()[0])')" = 4 ]
op history --history newer.db jobs
check "history commands refuse it too" [ "$rc" = 3 ] && has err "newer than this optipipe"

# two writers at once: the busy timeout lets both finish
"$bin" analyze -q --no-config --no-baseline --history c.db "$src/fixtures/demo" >o1 2>e1 &
p1=$!
"$bin" analyze -q --no-config --no-baseline --history c.db "$nights" >o2 2>e2 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "two analyze processes on one store both succeed" [ "$r1$r2" = 00 ]
check "...and both recorded (9 + 8 nights)" [ "$(runs_in c.db)" = 17 ]
check "...without errors" [ ! -s e1 ] && [ ! -s e2 ]

# retention
op history --history n.db prune --keep 2
check "prune --keep 2 removes the older runs" has out "removed 2 runs from n.db"
op history --history n.db prune --older-than 1w
check "prune --older-than removes old runs" has out "removed 2 runs"
op history --history n.db prune --older-than soon
check "a bad age is a usage error" [ "$rc" = 2 ] && has err "older-than takes an age"
op history --history n.db prune
check "prune needs a limit" [ "$rc" = 2 ]

# the rule-test harness: history inputs with decisions, in a private store
mkdir -p pack
cat >pack/seen.lua <<'LUA'
return { id = "team.seen", title = "What the history holds", severity = "info",
  sources = { "spark" },
  check = function(run, ctx)
    local h = ctx.history(run)
    local d = h[1] and h[1].findings[1] and h[1].findings[1].decision
    ctx.report { message = ("%d earlier; newest %s; decision %s; %d nodes"):format(#h,
      h[1] and h[1].id or "-", d and d.status or "none", h[1] and #h[1].nodes or 0) }
  end }
LUA
cat >pack/seen_test.lua <<LUA
local N = "$nights/"
return { rule = "team.seen", cases = {
  { name = "no history", inputs = { N .. "night-03.log.gz" },
    expect = { { message = "0 earlier" } } },
  { name = "two nights before, the newer one's finding decided",
    history = { N .. "night-01.log.gz",
                { input = N .. "night-02.log.gz",
                  decisions = { { rule = "team.seen", status = "dismissed", comment = "ok" } } } },
    inputs = { N .. "night-03.log.gz" },
    expect = { { message = "2 earlier; newest application_1700000000000_0302; decision dismissed; 8 nodes" } } },
} }
LUA
op rules test pack
check "rule tests take history inputs with decisions" [ "$rc" = 0 ] && has out "2 passed, 0 failed"
finish
