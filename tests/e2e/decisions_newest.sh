#!/usr/bin/env bash
# The newest decision wins (docs/baselines.md "A decisions file beside a
# run store"): analyze --history lays the run store's decisions over the
# decisions file's; a file's newer decision replaces the stored one, an
# older one never does; each conflict is said on stderr with both sides,
# counted in the text report, listed in the JSON report's
# applied.decision_conflicts and noted once in the store's audit trail;
# a decision only the store has hides the finding in the CLI run too;
# `baseline export` writes the store's decisions to a file.
# Usage: decisions_newest.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=$tmp/out
E2E_ERR=$tmp/err
cd "$tmp" || exit 1
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
demo=$src/fixtures/demo/flink-window-bottleneck.json
db=$tmp/h.db

op analyze --no-config --format json "$demo"
fp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["findings"][0]["fingerprint"])' "$tmp/out")
rule=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["findings"][0]["rule"])' "$tmp/out")
check "the demo has a finding" test -n "$fp"

decisions() { # decisions FILE STATUS REASON WHEN
    python3 - "$@" "$fp" "$rule" <<'PY'
import json, sys
path, status, reason, when, fp, rule = sys.argv[1:7]
d = {"fingerprint": fp, "rule": rule, "run": "r", "status": status,
     "decided_at": when}
if reason:
    d["reason"] = reason
json.dump({"optipipe_baseline": 1, "decisions": [d]}, open(path, "w"), indent=2)
PY
}
mkdir old new
decisions old/.optipipe-baseline.json dismissed "old reason" 2020-01-01T00:00:00Z
decisions new/.optipipe-baseline.json approved "" 2026-06-01T00:00:00Z

# the old file first: the store takes it
(cd old && op analyze --no-config --history "$db" --format json "$demo")
check "the old file's decision is recorded (exit 0)" test "$rc" = 0
# a newer file replaces it: a conflict the file wins
(cd new && op analyze --no-config --history "$db" --format json "$demo")
check "the newer file wins (said on stderr)" grep -q "newer wins: the file's" "$tmp/err"
check "the JSON report lists the conflict, the file winning" python3 - "$tmp/out" "$fp" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["applied"]["decision_conflicts"]
assert len(c) == 1 and c[0]["fingerprint"] == sys.argv[2], c
assert c[0]["winner"] == "file", c
assert c[0]["file"]["status"] == "approved" and c[0]["store"]["status"] == "dismissed", c
assert c[0]["store"]["comment"] == "old reason", c
PY
# the old file again: the store's newer decision stays
(cd old && op analyze --no-config --history "$db" --format json "$demo")
check "an older file never replaces the stored decision" grep -q "newer wins: the run store's" "$tmp/err"
check "stderr names both sides" grep -q "says dismissed 'old reason' (decided 2020-01-01T00:00:00Z), the run store says approved (decided 2026-06-01T00:00:00Z" "$tmp/err"
check "the finding shows the store's decision (approved, hidden)" python3 - "$tmp/out" "$fp" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert all(f["fingerprint"] != sys.argv[2] for f in r["findings"]), "shown"
c = r["applied"]["decision_conflicts"]
assert c[0]["winner"] == "store" and c[0]["store"]["status"] == "approved", c
PY
(cd old && op analyze --no-config --history "$db" "$demo")
check "the text report counts the conflict" grep -q "1 decision differing from" "$tmp/out"
check "the store kept approved" python3 - "$db" "$fp" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("select status from decisions where fingerprint = ?", (sys.argv[2],)).fetchone()[0] == "approved"
assert {r[0] for r in c.execute("select decision from findings where fingerprint = ?", (sys.argv[2],))} == {"approved"}
PY
check "the audit trail: file, file, one conflict (noted once for two runs)" python3 - "$db" "$fp" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select kind, old_status, new_status, new_comment, detail from decision_log"
                 " where fingerprint = ? order by seq", (sys.argv[2],)).fetchall()
assert [r[0] for r in rows] == ["file", "file", "conflict"], rows
assert rows[2][1:4] == ("approved", "dismissed", "old reason"), rows
assert ".optipipe-baseline.json" in rows[2][4] and "2020-01-01" in rows[2][4], rows
PY

# a decision only the store has hides the finding in a CLI run too
mkdir none
(cd none && op analyze --no-config --history "$db" --format json "$demo")
check "the store's decision applies without a file" python3 - "$tmp/out" "$fp" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert all(f["fingerprint"] != sys.argv[2] for f in r["findings"]), "shown"
assert "decision_conflicts" not in r["applied"], r["applied"]
PY

# baseline export
op baseline export --history "$db" -o "$tmp/exported.json"
check "baseline export exits 0" test "$rc" = 0
check "the export holds the store's decision" python3 - "$tmp/exported.json" "$fp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["decisions"]
assert len(d) == 1 and d[0]["fingerprint"] == sys.argv[2], d
assert d[0]["status"] == "approved" and d[0]["decided_at"] == "2026-06-01T00:00:00Z", d
PY
op baseline export --history "$db"
check "baseline export without -o is a usage error" test "$rc" = 2
op baseline export --history "$tmp/missing.db" -o x.json
check "a missing store is named (exit 3)" sh -c 'test '"$rc"' = 3 && grep -q missing.db '"$tmp/err"
op baseline create --no-config -o "$tmp/created.json" "$demo"
check "baseline create still works beside baseline export" test "$rc" = 0

finish
