#!/usr/bin/env bash
# The approval workflow end to end: review (answers on stdin, and single
# keys on a pseudo-terminal), the decisions file's format, analyze
# --baseline hiding decided findings and showing new ones, --show-suppressed,
# --fail-on ignoring decided findings, baseline create/update/--prune, and
# clear errors for broken decisions files.
# Usage: baseline.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=out
E2E_ERR=err
export SOURCE_DATE_EPOCH=1732870000
cd "$tmp" || exit 1
op() { "$bin" "$@" >out 2>err; rc=$?; }
count() { # count JSON [suppressed]: number of findings in a JSON report
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"]
if len(sys.argv) > 2:
    f = [x for x in f if x.get("suppressed")]
print(len(f))' "$@"
}
fp_of() { # fp_of JSON INDEX
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["findings"][int(sys.argv[2])]["fingerprint"])' "$@"
}
demo=$src/fixtures/demo
extra=$src/fixtures/flink/retained-one.json

op analyze --no-config --format json "$demo"
cp out all.json
n=$(count all.json)
check "the demo has findings to review" test "$n" -ge 5
fp0=$(fp_of all.json 0)
fp1=$(fp_of all.json 1)

# --- review with answers on stdin ---------------------------------------
printf 'x\nd\n\nd   sized for peak season  \n# a comment\napprove\ns\nq\n' \
    | "$bin" review --no-config "$demo" >out 2>err
rc=$?
check "review exits 0" test $rc = 0
check "review shows a fingerprint" grep -q "fingerprint $fp0" out
check "an unknown answer is refused on stderr" grep -q "answer a, d REASON, s or q" err
check "a dismissal needs a reason" grep -q "dismiss needs a reason" err
check "review summarises" grep -q "1 approved, 1 dismissed, 1 skipped" out
check "the default decisions file is written" test -f .optipipe-baseline.json
python3 - "$fp0" "$fp1" <<'PY' >check.out 2>&1
import json, sys
text = open(".optipipe-baseline.json").read()
d = json.loads(text)
assert d["optipipe_baseline"] == 1
ds = d["decisions"]
assert len(ds) == 2, ds
assert [x["fingerprint"] for x in ds] == sorted(x["fingerprint"] for x in ds)
by = {x["fingerprint"]: x for x in ds}
a, b = by[sys.argv[1]], by[sys.argv[2]]
assert a["status"] == "dismissed" and a["reason"] == "sized for peak season", a
assert b["status"] == "approved" and "reason" not in b, b
assert a["decided_at"] == "2024-11-29T08:46:40Z", a["decided_at"]
for x in ds:
    keys = list(x)
    order = ["fingerprint", "rule", "run", "node", "status", "reason", "decided_at"]
    assert keys == [k for k in order if k in x], keys
assert text.endswith("}\n") and '\n    {\n      "fingerprint"' in text
PY
check "decisions file: sorted, fixed key order, reasons, SOURCE_DATE_EPOCH" test $? = 0
test $? = 0 || cat check.out

# --- analyze --baseline ----------------------------------------------------
op analyze --no-config --format json --baseline .optipipe-baseline.json "$demo"
cp out base.json
check "analyze --baseline exits 0" test $rc = 0
check "decided findings vanish" test "$(count base.json)" = $((n - 2))
check "the dismissed one is gone" bash -c "! grep -q $fp0 base.json"
op analyze --no-config --format json --baseline .optipipe-baseline.json --show-suppressed "$demo"
cp out shown.json
check "--show-suppressed brings them back" test "$(count shown.json)" = "$n"
check "... marked suppressed" test "$(count shown.json suppressed)" = 2
op analyze --no-config --baseline .optipipe-baseline.json --show-suppressed "$demo"
check "text marks them" grep -q "(suppressed by baseline)" out
op analyze --no-config --format json --baseline .optipipe-baseline.json "$demo" "$extra"
cp out new.json
check "a new input's finding appears" grep -q '"rule": "flink.retained-checkpoints"' new.json
check "decided ones stay hidden next to it" bash -c "! grep -q $fp0 new.json"
op analyze --no-config --baseline missing.json "$demo"
check "a missing decisions file is empty" test $rc = 0
check "... with a notice" grep -q "no decisions yet" err

# --- a second review asks only about undecided findings -----------------
printf 'q\n' | "$bin" review --no-config "$demo" >out 2>err
check "second review starts after the decided ones" grep -q "\[1/$((n - 2))\]" out
cp .optipipe-baseline.json before.json
printf '' | "$bin" review --no-config "$demo" >out 2>err
check "end of input quits without changing the file" cmp -s before.json .optipipe-baseline.json

# --- baseline create / update ---------------------------------------------
op baseline create --no-config "$demo" -o b.json
check "baseline create exits 0" test $rc = 0
check "it reports what it recorded" grep -q "$n decision(s) recorded" err
op analyze --no-config --fail-on info --baseline b.json "$demo"
check "--fail-on ignores decided findings" test $rc = 0
op analyze --no-config --fail-on info --baseline b.json "$demo" "$extra"
check "--fail-on sees the new finding" test $rc = 1
op baseline update --no-config "$demo" "$extra" -o b.json
check "update adds only the new finding" grep -q "1 decision(s) recorded, $n kept" err
op baseline update --no-config --prune "$extra" -o b.json
check "--prune drops decisions whose findings are gone" grep -q "$n pruned" err
op baseline update --no-config "$demo" -o b.json --select 'spark.*' --status approved --reason ok
check "--select records only matching rules" python3 -c '
import json, sys
d = json.load(open("b.json"))["decisions"]
assert all(x["rule"].startswith("spark.") or x["rule"].startswith("flink.retained") for x in d), d
assert any(x["status"] == "approved" and x["reason"] == "ok" for x in d), d'
op baseline create --no-config --prune "$demo"
check "--prune goes with update only" test $rc = 2
op baseline frob "$demo"
check "unknown baseline command exits 2" test $rc = 2
op baseline create --no-config "$demo" --status maybe
check "a bad --status exits 2" test $rc = 2

# --- broken decisions files ----------------------------------------------
printf '{"decisions": []}\n' >bad1.json
op analyze --no-config --baseline bad1.json "$demo"
check "not a decisions file: exit 2" test $rc = 2
check "... named" grep -q "bad1.json: not an optipipe decisions file" err
printf '{"optipipe_baseline": 1, "decisions": [{"fingerprint": "zz", "rule": "x", "status": "approved"}]}' >bad2.json
op analyze --no-config --baseline bad2.json "$demo"
check "a bad fingerprint names the entry" grep -q "bad2.json: decisions\[1\]" err
python3 -c '
import json
d = {"optipipe_baseline": 1, "decisions": [
  {"fingerprint": "0123456789abcdef", "rule": "a", "run": "r", "status": "approved"},
  {"fingerprint": "0123456789abcdef", "rule": "a", "run": "r", "status": "dismissed"}]}
json.dump(d, open("dup.json", "w"))'
op analyze --no-config --baseline dup.json "$demo"
check "a fingerprint decided twice is an error" grep -q "decided twice" err
printf '{"optipipe_baseline": 2, "decisions": []}' >v2.json
op analyze --no-config --baseline v2.json "$demo"
check "a newer format is refused" grep -q "format 2" err

# --- review on a terminal: single keys from /dev/tty ----------------------
rm -f tty.json
python3 - "$bin" "$demo" <<'PY' >pty.out 2>&1
import os, pty, sys, time, select
binary, demo = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(binary, [binary, "review", "--no-config", "--baseline", "tty.json", demo])
out = b""
def until(text, timeout=float(os.environ.get("OP_TEST_WAIT_S", 120))):  # a safety net
    global out
    end = time.time() + timeout
    while text not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    if text not in out:
        sys.stdout.write(out.decode(errors="replace"))
        raise SystemExit("timed out waiting for %r" % text)
until(b"[1/")
until(b"(q)uit ? ")
os.write(fd, b"a")
until(b"[2/")
until(b"(q)uit ? ")
os.write(fd, b"d")
until(b"reason (required): ")
os.write(fd, b"not on our cluster\r")
until(b"[3/")
until(b"(q)uit ? ")
os.write(fd, b"q")
until(b"decisions in tty.json")
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
print("pty review done")
PY
check "review on a terminal reads keys" grep -q "pty review done" pty.out
test -f tty.json || cat pty.out
check "keys were recorded" python3 -c '
import json
d = json.load(open("tty.json"))["decisions"]
assert sorted(x["status"] for x in d) == ["approved", "dismissed"], d
assert [x for x in d if x["status"] == "dismissed"][0]["reason"] == "not on our cluster"'

echo "$pass passed, $fail failed"
test $fail = 0
