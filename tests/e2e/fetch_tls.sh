#!/usr/bin/env bash
# End-to-end tests of TLS in `optipipe fetch`: a fake JobManager behind a
# self-signed certificate made here with the openssl CLI is accepted with
# --cacert, refused without it, accepted with an explicit --insecure; a
# redirect down to http is never followed.
# Usage: fetch_tls.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout openssl

fx="$src/fixtures/flink/healthy.json"
if ! openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1; then
    echo "SKIP: openssl cannot make a self-signed certificate here"
    exit 77
fi
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other \
    -keyout "$tmp/other-key.pem" -out "$tmp/other.pem" >/dev/null 2>&1

start_server flink "$fx" --tls "$tmp/cert.pem" "$tmp/key.pem"
https="https://127.0.0.1:$port"

run fetch flink "$https" --cacert "$tmp/cert.pem" -o "$tmp/ok.json"
check "--cacert with the server's certificate: exit 0" test "$rc" = 0
check "...the export is complete" has "$tmp/ok.json" '"flink_rest_export": 1'

run fetch flink "$https" -o "$tmp/no.json"
check "a self-signed certificate is refused by default: exit 3" test "$rc" = 3
check "...saying it is a certificate problem" has "$tmp/err" "certificate"
check "...and how to trust it" has "$tmp/err" "--cacert"
check "...writing nothing" test ! -e "$tmp/no.json"

run fetch flink "$https" --cacert "$tmp/other.pem" -o "$tmp/no.json"
check "another CA does not vouch for it: exit 3" test "$rc" = 3

run fetch flink "$https" --insecure -o "$tmp/insecure.json"
check "--insecure skips verification: exit 0" test "$rc" = 0
check "...and warns" has "$tmp/err" "not verified"

run fetch flink "http://127.0.0.1:$port" --retries 0 -o "$tmp/plain.json"
check "plain http to a TLS port fails: exit 3" test "$rc" = 3
stop_server

jid=$(job_of "$fx")
start_server flink "$fx" --tls "$tmp/cert.pem" "$tmp/key.pem" \
    --fail "redirect-scheme:/jobs/$jid/config"
run fetch flink "https://127.0.0.1:$port" --cacert "$tmp/cert.pem" -o "$tmp/down.json"
check "a redirect from https to http is not followed: exit 4" test "$rc" = 4
check "...saying so" has "$tmp/err" "/jobs/$jid/config: redirected to another scheme"

finish
