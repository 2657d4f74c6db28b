#!/usr/bin/env bash
# The decisions' audit trail in optipipe serve (docs/serve.md "Who decided:
# the audit trail"): two people decide the same finding in turn; a CLI run
# on the same run store with an older decisions file is refused by the
# newer stored decision (a conflict); GET /api/v1/findings/{fp}/history
# lists every change newest first (who, when, from what to what, the
# comment, the conflict with both sides), the finding's page shows the
# same and the analysis page links to it; a read user may see it.
# Usage: serve_audit.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
demo=$src/fixtures/demo/flink-window-bottleneck.json
cd "$tmp" || exit 1

for u in alice:decide bob:decide reader:read; do
    "$bin" serve user add "${u%%:*}" --role "${u##*:}" --users users.txt >"tok.${u%%:*}" 2>/dev/null
done
check "server starts" serve_start "$tmp/data" --users users.txt
[ -n "$SERVE_URL" ] || { finish; exit 1; }
E2E_ERR=$SERVE_ERR
E2E_OUT=$tmp/body
as() { local u=$1; shift; curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$tmp/tok.$u")" "$@"; }
decide() { # decide USER STATUS COMMENT
    as "$1" -H 'Content-Type: application/json' \
        --data "{\"fingerprint\": \"$fp\", \"status\": \"$2\", \"comment\": \"$3\"}" "$SERVE_URL/api/v1/decisions"
}

as alice -F "file=@$demo" "$SERVE_URL/api/v1/analyses" >/dev/null
id=$(json_field body id)
done_yet() {
    as reader "$SERVE_URL/api/v1/analyses/$id" >/dev/null
    cp "$tmp/body" "$tmp/poll.json"
    case $(json_field "$tmp/poll.json" status) in done | failed) return 0 ;; esac
    return 1
}
check "the analysis finishes" serve_poll 300 done_yet
fp=$(json_field poll.json report.findings.0.fingerprint)
rule=$(json_field poll.json report.findings.0.rule)

check "alice approves" test "$(decide alice approved "looks right")" = 200
check "bob dismisses" test "$(decide bob dismissed "not worth it")" = 200
check "bob sets it again unchanged" test "$(decide bob dismissed "not worth it")" = 200

# a CLI run on the same store with an older decisions file
python3 - old.json "$fp" "$rule" <<'PY'
import json, sys
json.dump({"optipipe_baseline": 1, "decisions": [{"fingerprint": sys.argv[2], "rule": sys.argv[3],
    "run": "r", "status": "approved", "reason": "from an old checkout",
    "decided_at": "2020-01-01T00:00:00Z"}]}, open(sys.argv[1], "w"))
PY
"$bin" analyze --no-config --history "$tmp/data/history.db" --baseline old.json \
    --format json "$demo" >cli.json 2>cli.err
E2E_ERR=$tmp/cli.err
check "the CLI says the conflict, the store's decision winning" \
    grep -q "old.json says approved 'from an old checkout' (decided 2020-01-01T00:00:00Z), the run store says dismissed 'not worth it' (decided .* by bob); the newer wins: the run store's" cli.err
E2E_ERR=$SERVE_ERR

check "a read user may see the history (200)" test "$(as reader "$SERVE_URL/api/v1/findings/$fp/history")" = 200
check "the history: conflict, bob, alice, newest first; the unchanged one is no change" python3 - body "$fp" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
assert h["fingerprint"] == sys.argv[2], h
assert h["decision"]["status"] == "dismissed" and h["decision"]["decided_by"] == "bob", h["decision"]
c = h["history"]
assert [x["kind"] for x in c] == ["conflict", "decided", "decided"], c
assert c[2]["changed_by"] == "alice" and c[2]["from"] == {"status": "open", "comment": None}, c[2]
assert c[2]["to"] == {"status": "approved", "comment": "looks right"}, c[2]
assert c[1]["changed_by"] == "bob" and c[1]["from"]["status"] == "approved", c[1]
assert c[1]["to"] == {"status": "dismissed", "comment": "not worth it"}, c[1]
assert c[0]["from"] == {"status": "dismissed", "comment": "not worth it"}, c[0]  # kept
assert c[0]["to"] == {"status": "approved", "comment": "from an old checkout"}, c[0]  # refused
assert "old.json" in c[0]["detail"] and "2020-01-01T00:00:00Z" in c[0]["detail"], c[0]
assert c[0]["seq"] > c[1]["seq"] > c[2]["seq"], c
PY
as reader "$SERVE_URL/findings/$fp" >/dev/null
cp body page.html
E2E_OUT=$tmp/page.html
check "the page: the decision by bob" grep -q 'dismissed</span> &ldquo;not worth it&rdquo; by <b>bob</b>' page.html
check "the page: alice's change from open to approved" \
    grep -q '<td>alice</td><td>decided</td><td><span class="state state-open">open</span> &rarr; <span class="state state-approved">approved</span> &ldquo;looks right&rdquo;' page.html
check "the page: the conflict with both sides" \
    grep -q 'class="conflict".*old.json, decided 2020-01-01T00:00:00Z said .*approved.*from an old checkout.*not applied: the run store.s newer .*dismissed.*not worth it' page.html
as reader "$SERVE_URL/analyses/$id" >/dev/null
check "the analysis page links the finding's history" grep -q "href=\"/findings/$fp\">Decision history" body
check "a read user's analysis page has no decide form" grep -q 'Your role (read) may not decide' body
check "a bad fingerprint is 400" test "$(as reader "$SERVE_URL/findings/nope")" = 400
serve_stop
finish
