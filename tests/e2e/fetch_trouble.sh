#!/usr/bin/env bash
# End-to-end tests of `optipipe fetch flink` when things go wrong: refused
# connections, a 500 on one path, a path that never answers, responses
# over the size cap (with and without Content-Length), a redirect loop, a
# transient 503, something that is not a JobManager, credentials and
# headers, and usage errors. Exit codes: 3 nothing fetched, 4 incomplete.
# Usage: fetch_trouble.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout

fx="$src/fixtures/flink/window-bottleneck.json"
jid=$(job_of "$fx")

errors_of() { json_get "$1" '" ".join(e["path"] for e in d.get("errors", []))'; }

# --- nothing there ------------------------------------------------------------
p=$(free_port)
run fetch flink "http://127.0.0.1:$p" --retries 1 -o "$tmp/x.json"
check "refused connection exits 3" test "$rc" = 3
check "...saying it cannot fetch" has "$tmp/err" "cannot fetch from http://127.0.0.1:$p"
check "...after retrying" has "$tmp/err" "after 2 attempts"
check "...writing no file" test ! -e "$tmp/x.json"

start_server junk
run fetch flink "$url" -o "$tmp/x.json"
check "not a JobManager exits 3" test "$rc" = 3
check "...and says so" has "$tmp/err" "does not look like a Flink JobManager"
stop_server

# --- one path fails: the rest is written, exit 4 ---------------------------
start_server flink "$fx" --fail "500:/jobs/$jid/checkpoints/config"
run fetch flink "$url" -o "$tmp/e500.json"
check "500 on one path exits 4" test "$rc" = 4
check "...the export lists it under errors" \
    test "$(errors_of "$tmp/e500.json")" = "/jobs/$jid/checkpoints/config"
check "...stderr names it" has "$tmp/err" "/jobs/$jid/checkpoints/config: HTTP 500"
check "...after retries" has "$tmp/err" "after retries"
check "...and says the file is incomplete" has "$tmp/err" "incomplete: 1 of"
run analyze "$tmp/e500.json"
check "the incomplete export still analyzes" test "$rc" = 0
stop_server

# A hostile error text (ESC, BEL, C1 CSI) reaches stderr cleaned.
start_server flink "$fx" --fail "500:/jobs/$jid/plan" \
    --error-text $'boom \e]0;owned\a \xc2\x9b31m red'
run fetch flink "$url" -o "$tmp/ectl.json"
check "a 500 with control characters: exit 4" test "$rc" = 4
check "...stderr shows the message" has "$tmp/err" "boom"
check "...without ESC, BEL or C1 controls" python3 "$src/tests/fetch/no_controls.py" "$tmp/err"
stop_server

start_server flink "$fx" --fail "hang:/jobs/$jid/plan" --hang-seconds 30
run fetch flink "$url" --timeout 1 --retries 1 -o "$tmp/hang.json"
check "a path that never answers: exit 4 (not a hang)" test "$rc" = 4
check "...it is listed" test "$(errors_of "$tmp/hang.json")" = "/jobs/$jid/plan"
check "...as timed out" has "$tmp/err" "timed out"
stop_server

start_server flink "$fx" --fail "big:/jobs/$jid/config" --big-bytes 300000
run fetch flink "$url" --max-size 64k -o "$tmp/big.json"
check "response over the cap (Content-Length): exit 4" test "$rc" = 4
check "...named with the cap" has "$tmp/err" "larger than the cap of 65536 bytes"
check "...listed" test "$(errors_of "$tmp/big.json")" = "/jobs/$jid/config"
stop_server

start_server flink "$fx" --fail "bigchunked:/jobs/$jid/config" --big-bytes 300000
run fetch flink "$url" --max-size 64k -o "$tmp/big.json"
check "response over the cap (chunked): exit 4" test "$rc" = 4
check "...named with the cap" has "$tmp/err" "larger than the cap of 65536 bytes"
stop_server

start_server flink "$fx" --fail "loop:/jobs/$jid/exceptions"
run fetch flink "$url" -o "$tmp/loop.json"
check "redirect loop: exit 4" test "$rc" = 4
check "...says so" has "$tmp/err" "redirects"
check "...listed" test "$(errors_of "$tmp/loop.json")" = "/jobs/$jid/exceptions?maxExceptions=20"
stop_server

start_server flink "$fx" --fail "flaky:/jobs/$jid"
run fetch flink "$url" -o "$tmp/flaky.json"
check "a 503 once is retried: exit 0" test "$rc" = 0
check "...no errors in the export" test "$(errors_of "$tmp/flaky.json")" = ""
stop_server

start_server flink "$fx" --fail "flaky:/jobs/$jid/config"
run fetch flink "$url" --retries 0 -o "$tmp/flaky.json"
check "without retries a 503 is a failure: exit 4" test "$rc" = 4
stop_server

# --- credentials ------------------------------------------------------------
token="tok-$RANDOM-$RANDOM-secret"
start_server flink "$fx" --require-token "$token" --require-header "X-Tenant: blue"
run fetch flink "$url" --header "X-Tenant: blue" -o "$tmp/auth.json"
check "401 without a token: exit 3" test "$rc" = 3
check "...pointing at --token-env" has "$tmp/err" "token-env"
export OP_TEST_TOKEN="$token"
run fetch flink "$url" --token-env OP_TEST_TOKEN --header "X-Tenant: blue" -o "$tmp/auth.json"
check "the token from the environment works" test "$rc" = 0
check "...never in the export" lacks "$tmp/auth.json" "$token"
check "...never on stderr" lacks "$tmp/err" "$token"
run fetch flink "$url" --token-env OP_TEST_TOKEN -o "$tmp/auth.json"
check "a missing required header fails" test "$rc" = 3
check "...without echoing the token" lacks "$tmp/err" "$token"
run fetch flink "$url" --token-env OP_TEST_UNSET_VAR -o "$tmp/auth.json"
check "--token-env naming an unset variable: exit 2" test "$rc" = 2
run fetch flink "$url" --token-env "$token"
check "--token-env with a token instead of a name: exit 2" test "$rc" = 2
check "...not echoed" lacks "$tmp/err" "$token"
run fetch flink "http://user:$token@127.0.0.1:$port"
check "credentials in the URL: exit 2" test "$rc" = 2
check "...not echoed" lacks "$tmp/err" "$token"
run fetch flink "$url" --header "X-Bad: a
b"
check "a header with a line break: exit 2" test "$rc" = 2
stop_server

# --- usage --------------------------------------------------------------------
run fetch
check "fetch without a source: exit 2" test "$rc" = 2
run fetch flink
check "fetch flink without a URL: exit 2" test "$rc" = 2
run fetch flink "ftp://127.0.0.1:1/"
check "an ftp URL: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1/?x=1"
check "a URL with a query: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --samples -1
check "negative --samples: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --timeout 0
check "--timeout 0: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --max-size lots
check "bad --max-size: exit 2" test "$rc" = 2
run fetch flink "http://127.0.0.1:1" --cacert "$tmp/missing.pem"
check "--cacert of a missing file: exit 2" test "$rc" = 2
run fetch kafka "http://127.0.0.1:1"
check "unknown source: exit 2" test "$rc" = 2
run fetch flink --help
check "fetch flink --help exits 0" test "$rc" = 0
check "...documents the exit codes" has "$tmp/out" "4 written but incomplete"

finish
