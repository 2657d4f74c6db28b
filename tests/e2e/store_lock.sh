#!/usr/bin/env bash
# The run store under another writer and on read-only media
# (docs/history.md "Reliability"): a store held by another connection (a
# python3 sqlite3 write transaction, released through a fifo: no sleeps)
# makes `analyze --history` wait, saying so, and record once it is let go;
# with OPTIPIPE_STORE_WAIT_MS=0 it gives up at once: report printed, exit 6.
# A store in a read-only bind mount is read immutable by `history` and
# `diff`, and `analyze` on it exits 6 saying it is read-only. A negative
# schema version is refused by writers and readers. `diff -` reads
# standard input.
# Usage: store_lock.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/store_lock.sh"
E2E_OUT=out
E2E_ERR=err
export SOURCE_DATE_EPOCH=1732870000
unset OPTIPIPE_HISTORY OPTIPIPE_STORE_WAIT_MS
cd "$tmp" || exit 1
trap 'unlock_store 2>/dev/null; rm -rf "$tmp"' EXIT
nights=$src/fixtures/spark-nightly/steady
op() { "$bin" "$@" >out 2>err; rc=$?; }
an() { "$bin" analyze --no-config --no-baseline "$@" >out 2>err; rc=$?; }
runs_in() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])' "$1"; }

an --history s.db "$nights/night-01.log.gz"
check "a store with one run" [ "$rc" = 0 ] && [ "$(runs_in s.db)" = 1 ]

# ---- another writer holds it ------------------------------------------------------
check "another writer takes the store" lock_store s.db
OPTIPIPE_STORE_WAIT_MS=0 an --history s.db "$nights/night-02.log.gz"
check "not waiting: exit 6 (not recorded)" [ "$rc" = 6 ]
check "...the report is printed all the same" has out "spark.config"
check "...stderr says who held it" has err "s.db: another writer held the run store for more than 0 ms"
check "...and that nothing was recorded" has err "the analysis was not recorded into s.db; exit 6"
OPTIPIPE_STORE_WAIT_MS=0 "$bin" analyze --no-config --no-baseline --history s.db \
    --fail-on info "$nights/night-02.log.gz" >out 2>err
check "6 beats 1 (findings at --fail-on)" [ "$?" = 6 ]

# waiting: the note comes while the lock is held; let go, the recording goes in
mkfifo errpipe
OPTIPIPE_STORE_WAIT_MS=600000 "$bin" analyze --no-config --no-baseline --history s.db \
    "$nights/night-02.log.gz" >out 2>errpipe &
apid=$!
exec 3<errpipe
: >err
while IFS= read -r line <&3; do
    printf '%s\n' "$line" >>err
    case $line in *"waiting up to 600000 ms"*) break ;; esac
done
check "a waiting writer says so" has err "s.db: another writer holds the run store; waiting up to 600000 ms"
check "...and has recorded nothing yet" [ "$(runs_in s.db)" = 1 ]
check "the other writer lets go" unlock_store
cat <&3 >>err
exec 3<&-
wait "$apid"
rc=$?
check "the waiting analysis then records: exit 0" [ "$rc" = 0 ] && has err "s.db: recorded 1 run"
check "...two runs stored" [ "$(runs_in s.db)" = 2 ]

OPTIPIPE_STORE_WAIT_MS=soon an --history s.db "$nights/night-02.log.gz"
check "a bad OPTIPIPE_STORE_WAIT_MS is said, the default used" [ "$rc" = 0 ] && has err "OPTIPIPE_STORE_WAIT_MS=soon is not"

# ---- a negative schema ---------------------------------------------------------------
cp s.db neg.db
python3 -c 'import sqlite3; c=sqlite3.connect("neg.db"); c.execute("pragma user_version = -1"); c.commit()'
an --history neg.db "$nights/night-03.log.gz"
check "a negative schema: analyze refuses to write (exit 6)" [ "$rc" = 6 ] && has err "neg.db: run store schema -1 is not one optipipe writes"
check "...nothing written into it" [ "$(runs_in neg.db)" = 2 ]
op history --history neg.db jobs
check "...history refuses it the same way" [ "$rc" = 3 ] && has err "schema -1 is not one optipipe writes"

# ---- diff - --------------------------------------------------------------------------
"$bin" diff --no-config - "$nights/night-02.log.gz" <"$nights/night-01.log.gz" >out 2>err
rc=$?
check "diff - reads standard input" [ "$rc" = 0 ] && has out "application_1700000000000_0301"
op diff --no-config - - </dev/null
check "diff - -: a usage error" [ "$rc" = 2 ] && has err "standard input can be one side only"

# ---- read-only media ----------------------------------------------------------------
mkdir ro && cp s.db ro/s.db
if [ "$(id -u)" = 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
cat >inro.sh <<SH
mount --bind "$tmp/ro" "$tmp/ro" && mount -o remount,bind,ro "$tmp/ro" || exit 99
touch "$tmp/ro/probe" 2>/dev/null && exit 98 # not read-only after all
"$bin" history --history "$tmp/ro/s.db" jobs >h.out 2>h.err; echo \$? >h.rc
"$bin" diff --no-config --history "$tmp/ro/s.db" nightly-orders@previous nightly-orders@latest >d.out 2>d.err; echo \$? >d.rc
"$bin" analyze --no-config --no-baseline --history "$tmp/ro/s.db" "$nights/night-03.log.gz" >a.out 2>a.err; echo \$? >a.rc
SH
$ns sh inro.sh 2>ns.err
nsrc=$?
if [ "$nsrc" = 99 ] || [ "$nsrc" = 98 ] || ! [ -f h.rc ]; then
    echo "NOTICE: no read-only bind mount here ($ns: $(head -c 200 ns.err)): read-only media checks skipped"
else
    E2E_OUT=h.out E2E_ERR=h.err
    check "read-only media: history reads the store" [ "$(cat h.rc)" = 0 ] && has h.out nightly-orders
    check "...and says it reads it immutable" has h.err "on read-only media: read as it is (immutable)"
    E2E_OUT=d.out E2E_ERR=d.err
    check "...diff of two stored runs too" [ "$(cat d.rc)" = 0 ] && has d.out application_1700000000000_0302
    E2E_OUT=a.out E2E_ERR=a.err
    check "...analyze --history there: exit 6" [ "$(cat a.rc)" = 6 ]
    check "...saying it is read-only" has a.err "ro/s.db: read-only"
    check "...the report printed" has a.out "spark.config"
    check "...the store unchanged" [ "$(runs_in ro/s.db)" = 2 ]
    check "...and no -shm or -wal left beside it" [ ! -e ro/s.db-shm ] && [ ! -e ro/s.db-wal ]
fi
finish
