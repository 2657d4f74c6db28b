#!/usr/bin/env bash
# No write follows a planted link (core/wfile.h, docs/security.md): a
# symbolic link where `baseline create|update -o`, `review`'s decisions
# file, `analyze -o`, `--emit-changes DIR`'s patches or `rules test
# --junit` would write is refused with a message naming it, the file it
# points to is left as it was, and the rest of the work is still done;
# the files written land whole (no temporary file left beside them).
# Usage: planted_links.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=out
E2E_ERR=err
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY
cd "$tmp" || exit 1
demo=$src/fixtures/demo
op() { "$bin" "$@" >out 2>err; rc=$?; }
echo precious >victim
untouched() { [ "$(cat victim)" = precious ]; }

# baseline create / update: a link to a file that is not a decisions file
# is refused when read; a dangling one (it would create its target) and
# one to a valid decisions file are refused when written
ln -s victim link.json
op baseline create --no-config "$demo" -o link.json
check "baseline create -o LINK: refused (exit 2)" [ "$rc" = 2 ] && untouched
ln -s "$tmp/created-elsewhere" dangling.json
op baseline create --no-config "$demo" -o dangling.json
check "baseline create -o DANGLING-LINK: refused (exit 2)" [ "$rc" = 2 ]
check "...saying it is a link" has err "dangling.json: a symbolic link; refusing to write through it"
check "...nothing created where it points" [ ! -e created-elsewhere ]
check "...the link still a link" [ -L dangling.json ]
printf '{"optipipe_baseline": 1, "decisions": []}\n' >valid.json
ln -s valid.json valid-link.json
op baseline create --no-config "$demo" -o valid-link.json
check "baseline create -o LINK-TO-DECISIONS: refused" [ "$rc" = 2 ] && has err "valid-link.json: a symbolic link"
check "...the decisions file it points to untouched" [ "$(cat valid.json)" = '{"optipipe_baseline": 1, "decisions": []}' ]
op baseline create --no-config "$demo" -o b.json
check "baseline create to a plain file works" [ "$rc" = 0 ] && json_ok b.json
check "...no temporary file left" [ -z "$(ls | grep 'b.json.tmp')" ]
op baseline update --no-config "$demo" -o link.json --prune
check "baseline update -o LINK: refused too" [ "$rc" != 0 ] && has err "symbolic link" && untouched

# review: its decisions file a planted link (an untrusted checkout)
mkdir -p checkout/.git
ln -s "$tmp/review-elsewhere" checkout/.optipipe-baseline.json
(cd checkout && printf 'a\nq\n' | "$bin" review --no-config "$demo" >../out 2>../err)
check "review into a planted decisions file: refused" has err "optipipe-baseline.json: a symbolic link"
check "...nothing created where it points" [ ! -e review-elsewhere ]

# analyze -o
ln -s victim report.txt
op analyze --no-config --no-baseline "$demo" -o report.txt
check "analyze -o LINK: refused (exit 2)" [ "$rc" = 2 ] && has err "report.txt: a symbolic link"
check "...the target untouched" untouched
op analyze --no-config --no-baseline "$demo" -o /dev/null
check "analyze -o /dev/null still works" [ "$rc" = 0 ]

# --emit-changes DIR with links already in it
op analyze -q --no-config --no-baseline --all --emit-changes clean "$demo"
check "emit-changes writes patches" [ "$rc" = 0 ] && [ -n "$(ls clean)" ]
mkdir planted
for f in clean/*; do ln -s ../victim "planted/$(basename "$f")"; done
op analyze -q --no-config --no-baseline --all --emit-changes planted "$demo"
check "emit-changes into planted links: refused (exit 2)" [ "$rc" = 2 ]
check "...naming the link" has err "planted/.*: a symbolic link; refusing to write through it"
check "...the target untouched" untouched

# rules test --junit
mkdir pack
cat >pack/x.lua <<'LUA'
return { id = "team.x", title = "x", severity = "info", sources = { "spark" },
  check = function(run, ctx) end }
LUA
cat >pack/x_test.lua <<LUA
return { rule = "team.x", cases = { { name = "quiet", inputs = { "$src/fixtures/spark-nightly/steady/night-01.log.gz" }, expect = {} } } }
LUA
ln -s victim junit.xml
op rules test pack --junit junit.xml
check "rules test --junit LINK: refused" has err "junit.xml: a symbolic link" && untouched
finish
