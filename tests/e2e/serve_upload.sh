#!/usr/bin/env bash
# optipipe serve's upload path (serve/serve_upload.c, serve_multipart.c)
# against a server of its own: over --max-upload-bytes and --max-files ->
# 413 with nothing left in DATA/tmp; malformed multipart -> 400 JSON; a
# client's "../../x" lands as DATA/analyses/<id>/inputs/x and nothing
# appears outside DATA; a client that sends half a body and goes away
# leaves no analysis and an empty DATA/tmp; gzip, .zip and raw bodies are
# accepted and analyzed.
# Usage: serve_upload.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # the test changes folder
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"

data=$tmp/data
flink=$src/fixtures/demo/flink-window-bottleneck.json
# the server runs from $tmp/w/a/b: a name used as a path, relative to the
# working folder or to DATA/tmp/<r>/inputs, would land in $tmp/x or $tmp/w/x
mkdir -p "$tmp/w/a/b"
cd "$tmp/w/a/b" || exit 1
# --conn-timeout 60, longer than the 30 s poll for the staging of a client
# that went away mid-body: the server must see the client go, not wait for
# the connection to time out (it did now and then with libmicrohttpd's
# epoll mode, see srv_http_start).
check "server starts" serve_start "$data" --max-upload-bytes 200000 --max-files 3 \
    --conn-timeout 60
api=$SERVE_URL/api/v1/analyses

# post OUT CURL-ARGS...: the status code, the body into OUT
post() {
    local out=$1
    shift
    curl -s -o "$out" -w '%{http_code}' "$@" "$api"
}
tmp_empty() { [ -z "$(ls -A "$data/tmp" 2>/dev/null)" ]; }
n_analyses() { ls "$data/analyses" 2>/dev/null | wc -l; }
is_json_error() { # FILE STATUS [NEEDLE]
    [ "$(json_field "$1" error.status)" = "$2" ] &&
        { [ -z "${3:-}" ] || json_field "$1" error.message | grep -q -- "$3"; }
}
E2E_OUT=$tmp/out

# ---- limits -> 413, nothing staged stays --------------------------------------
head -c 250000 /dev/zero >"$tmp/big"
# With "Expect: 100-continue" (curl's own for large bodies) the 413 comes
# before the body is sent; without it a client still sending when the
# server answers and closes may lose the answer to a reset (docs/serve.md).
code=$(post "$tmp/out" -H "Expect: 100-continue" --expect100-timeout 60 \
    -F "file=@$tmp/big")
check "over --max-upload-bytes: 413" test "$code" = 413
check "over --max-upload-bytes: JSON error" is_json_error "$tmp/out" 413
check "over --max-upload-bytes: DATA/tmp empty" tmp_empty
# without a Content-Length the staging limit itself trips; the rest of the
# chunked body is read and dropped (lingering close), so the client reads
# the 413, never a reset
code=$(post "$tmp/out" -H "Transfer-Encoding: chunked" -F "file=@$tmp/big")
check "chunked over the limit: 413 ($code)" test "$code" = 413
check "chunked over the limit: JSON error" is_json_error "$tmp/out" 413 "max-upload-bytes"
check "chunked over the limit: DATA/tmp empty" serve_poll 300 tmp_empty
printf 'one\n' >"$tmp/f1"
code=$(post "$tmp/out" -F "file=@$tmp/f1" -F "file=@$tmp/f1" -F "file=@$tmp/f1" \
    -F "file=@$tmp/f1")
check "4 files over --max-files 3: 413" test "$code" = 413
check "over --max-files: the message names it" is_json_error "$tmp/out" 413 "max-files"
check "over --max-files: DATA/tmp empty" tmp_empty
check "no analysis made by refused uploads" test "$(n_analyses)" = 0

# ---- malformed multipart -> 400 JSON --------------------------------------------
mp() { # BODY-FILE CONTENT-TYPE: posts it raw
    post "$tmp/out" -H "Content-Type: $2" --data-binary "@$1"
}
printf -- '--B\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhalf' \
    >"$tmp/cut"
code=$(mp "$tmp/cut" "multipart/form-data; boundary=B")
check "no final boundary: 400" test "$code" = 400
check "no final boundary: JSON names the byte" is_json_error "$tmp/out" 400 \
    "multipart: byte 70: the body ends inside part 'file'"
printf -- '--B\r\nContent-Disposition form-data name=file\r\n\r\nx\r\n--B--\r\n' >"$tmp/badh"
code=$(mp "$tmp/badh" "multipart/form-data; boundary=B")
check "bad part header: 400" test "$code" = 400
check "bad part header: JSON error" is_json_error "$tmp/out" 400 "multipart: byte 5:"
code=$(mp "$tmp/badh" "multipart/form-data")
check "no boundary: 400" test "$code" = 400
check "no boundary: JSON error" is_json_error "$tmp/out" 400 "no boundary"
printf -- '--B\r\nContent-Disposition: form-data; name="other"; filename="x"\r\n\r\nx\r\n--B--\r\n' \
    >"$tmp/otherf"
code=$(mp "$tmp/otherf" "multipart/form-data; boundary=B")
check "a file in another field: 400 naming it" is_json_error "$tmp/out" 400 "'other'"
check "malformed bodies: DATA/tmp empty" tmp_empty
check "malformed bodies: no analysis" test "$(n_analyses)" = 0

# ---- ../../x lands inside ----------------------------------------------------------
code=$(post "$tmp/out" -F "file=@$flink;filename=../../x")
check "../../x accepted: 202" test "$code" = 202
id=$(json_field "$tmp/out" id)
check "../../x is DATA/analyses/<id>/inputs/x" test -f "$data/analyses/$id/inputs/x"
check "../../x has the bytes" cmp -s "$flink" "$data/analyses/$id/inputs/x"
check "nothing named x outside DATA/analyses/<id>/inputs" \
    test "$(find "$tmp" -name x)" = "$data/analyses/$id/inputs/x"
# what lies in DATA beside the server's own files (printed when not empty)
data_extra() {
    local extra
    extra=$(cd "$data" && ls -A | grep -v -x -e analyses -e tmp -e history.db \
        -e 'history\.db-.*' -e serve.lock -e serve.port)
    [ -z "$extra" ] || { echo "in DATA: $extra" >"$tmp/extra"; return 1; }
}
E2E_OUT=$tmp/extra
check "nothing beside the server's folders in DATA" data_extra
E2E_OUT=$tmp/out
check "the working folder stays empty" test -z "$(ls -A "$tmp/w/a/b")"

# ---- a client that goes away mid-body ------------------------------------------------
before=$(n_analyses)
python3 - "$SERVE_PORT" "$data/tmp" >"$tmp/py.out" 2>&1 <<'PYEOF'
import os, socket, sys, time
port, tmpdir = int(sys.argv[1]), sys.argv[2]
part = (b'--B\r\nContent-Disposition: form-data; name="file"; filename="h.json"\r\n\r\n'
        + b"x" * 100000 + b"\r\n--B--\r\n")
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /api/v1/analyses HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
          b"Content-Type: multipart/form-data; boundary=B\r\n"
          b"Content-Length: %d\r\n\r\n" % (port, len(part)))
s.sendall(part[:len(part) // 2])
# wait (bounded) until the server has started staging, then go away
end = time.monotonic() + float(os.environ.get("OP_TEST_WAIT_S", 120))  # a safety net
while True:
    if os.path.isdir(tmpdir) and os.listdir(tmpdir):
        break
    if time.monotonic() >= end:
        sys.exit("the upload was never staged")
    time.sleep(0.05)
s.close()
print("gone")
PYEOF
check "half-sent upload was staged before the client left" has "$tmp/py.out" gone
check "client gone: DATA/tmp empty again" serve_poll 300 tmp_empty
check "client gone: no analysis" test "$(n_analyses)" = "$before"
check "server still answers" curl -sf -o /dev/null "$SERVE_URL/healthz"

# ---- gzip, zip and raw bodies are accepted and analyzed ------------------------------
done_ok() { # ID: the analysis finished
    curl -s -o "$tmp/st" "$api/$1" && [ "$(json_field "$tmp/st" status)" = done ]
}
gzip -c "$flink" >"$tmp/flink.json.gz"
code=$(post "$tmp/out" -F "file=@$tmp/flink.json.gz")
check "gzip upload: 202" test "$code" = 202
gz_id=$(json_field "$tmp/out" id)
check "gzip input kept its name" test -f "$data/analyses/$gz_id/inputs/flink.json.gz"
check "gzip analysis done" serve_poll 600 done_ok "$gz_id"
check "gzip analysis read the flink run" test "$(json_field "$tmp/st" report.runs.0.source)" = flink
(cd "$src/fixtures/demo" && python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in ("manifest.json", "run_results-2024-05-01.json"):
        z.write("dbt/" + f, "target/" + f)' "$tmp/target.zip")
code=$(post "$tmp/out" -F "file=@$tmp/target.zip")
check "zip upload: 202" test "$code" = 202
zip_id=$(json_field "$tmp/out" id)
check "zip analysis done" serve_poll 600 done_ok "$zip_id"
check "zip analysis read the dbt run" test "$(json_field "$tmp/st" report.runs.0.source)" = dbt
code=$(curl -s -o "$tmp/out" -w '%{http_code}' -H "Content-Type: application/gzip" \
    --data-binary "@$tmp/flink.json.gz" "$api?name=../../raw.json.gz")
check "raw body: 202" test "$code" = 202
raw_id=$(json_field "$tmp/out" id)
check "raw body: ?name sanitized" test -f "$data/analyses/$raw_id/inputs/raw.json.gz"
check "raw analysis done" serve_poll 600 done_ok "$raw_id"
check "DATA/tmp empty at the end" tmp_empty
check "SIGTERM stops it with 0" serve_stop
finish
