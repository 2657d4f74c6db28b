# tests/e2e/lib/store_lock.sh - another writer holding a run store, made
# deterministic: a python3 sqlite3 connection takes the write lock (BEGIN
# IMMEDIATE) and holds it until the test writes a fifo. No sleeps: the
# holder says "held" through a second fifo once it has the lock.
# Source it after lib/check.sh (it needs $tmp).
#
#   lock_store DB    takes DB's write lock in the background; returns once
#                    it is held (1 when the holder could not take it)
#   unlock_store     lets it go (rolls back) and waits for the holder

LOCK_PID=
lock_store() {
    rm -f "$tmp/lock.go" "$tmp/lock.ready"
    mkfifo "$tmp/lock.go" "$tmp/lock.ready" || return 1
    python3 - "$1" "$tmp/lock.ready" "$tmp/lock.go" <<'PYEOF' &
import sqlite3, sys
db, ready, go = sys.argv[1:4]
c = sqlite3.connect(db, isolation_level=None, timeout=0)
try:
    c.execute("BEGIN IMMEDIATE")
    said = "held"
except sqlite3.Error as e:
    said = "error: %s" % e
with open(ready, "w") as f:
    f.write(said + "\n")
if said == "held":
    open(go).read()
    c.execute("ROLLBACK")
PYEOF
    LOCK_PID=$!
    local said
    read -r said <"$tmp/lock.ready"
    [ "$said" = held ] || { echo "lock_store: $said" >&2; return 1; }
}
unlock_store() {
    [ -n "$LOCK_PID" ] || return 0
    echo go >"$tmp/lock.go"
    wait "$LOCK_PID"
    LOCK_PID=
}
