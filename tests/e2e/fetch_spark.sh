#!/usr/bin/env bash
# End-to-end tests of `optipipe fetch spark-history` against a fake Spark
# History Server on loopback: the logs zip (a single-file log and a rolling
# eventlog_v2_* folder) is unpacked so that `analyze DIR` finds what the
# fixtures hold; entries escaping the folder and symlinks are refused;
# unknown apps, attempts, non-zips and oversized archives fail cleanly.
# Usage: fetch_spark.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$src/tests/fetch/lib.sh"
need_tools python3 timeout

same_findings() { python3 "$src/tests/fetch/same_findings.py" "$1" "$2"; }

app="app-20240101000000-0001"
skew="$src/fixtures/spark/skew.zstd"
gc="$src/fixtures/spark/gc.zstd"
roll=eventlog_v2_application_1700000000000_0004

start_server spark --app "$app" --attempt 1 \
    --file "$app.zstd=$skew" \
    --file "$roll/events_1_application_1700000000000_0004.zstd=$gc" \
    --file "$roll/appstatus_application_1700000000000_0004=text:"
run fetch spark-history "$url" --app "$app" -o "$tmp/logs"
check "fetch spark-history exits 0" test "$rc" = 0
check "the single log is unpacked" test -s "$tmp/logs/$app.zstd"
check "the rolling folder is unpacked" test -s "$tmp/logs/$roll/events_1_application_1700000000000_0004.zstd"
leftovers=$(find "$tmp/logs" -name '.optipipe-*')
check "the download is not left behind" test -z "$leftovers"
check "stderr says where the files went" has "$tmp/err" "unpacked into $tmp/logs"
"$bin" analyze --format json --deterministic "$skew" "$gc" >"$tmp/a.json" 2>/dev/null
"$bin" analyze --format json --deterministic "$tmp/logs" >"$tmp/b.json" 2>/dev/null
same_findings "$tmp/a.json" "$tmp/b.json" >"$tmp/out" 2>&1
rc=$?
check "analyze DIR finds what the fixtures hold" test "$rc" = 0
check "...two runs" test "$(json_get "$tmp/b.json" 'len(d["runs"])')" = 2

run fetch spark-history "$url" --app "$app" --attempt 1 -o "$tmp/logs1"
check "--attempt 1 exits 0" test "$rc" = 0
check "...unpacked" test -s "$tmp/logs1/$app.zstd"
run fetch spark-history "$url" --app "$app" --attempt 7 -o "$tmp/logs7"
check "an unknown attempt exits 3" test "$rc" = 3
run fetch spark-history "$url" --app app-nope -o "$tmp/nope"
check "an unknown application exits 3" test "$rc" = 3
check "...says not found" has "$tmp/err" "not found"
run fetch spark-history "$url" --app "../etc" -o "$tmp/nope"
check "an app id that is no id: exit 2" test "$rc" = 2
run fetch spark-history "$url" -o "$tmp/nope"
check "without --app: exit 2" test "$rc" = 2
run fetch spark-history "$url" --app "$app" --job x
check "Flink options are refused: exit 2" test "$rc" = 2
run fetch spark-history "$url" --app "$app" --max-size 1k -o "$tmp/small"
check "a zip over --max-size exits 3" test "$rc" = 3
check "...naming the cap" has "$tmp/err" "larger than the cap"
(cd "$tmp" && timeout 120 "$bin" fetch spark-history "$url" --app "$app" -q >"$tmp/out" 2>"$tmp/err")
rc=$?
check "the default folder is ./APP_ID" test "$rc" = 0 -a -s "$tmp/$app/$app.zstd"
check "-q keeps stderr empty" test ! -s "$tmp/err"
stop_server

# --- a hostile archive ----------------------------------------------------------
mkdir -p "$tmp/evil/out" "$tmp/evil/elsewhere"
ln -s "$tmp/evil/elsewhere" "$tmp/evil/out/linked"
start_server spark --app "$app" --file "$app.zstd=$skew" --evil \
    --file "linked/through-link.txt=text:hello" \
    --file $'../\xc2\x9b31mred.txt=text:x'
run fetch spark-history "$url" --app "$app" -o "$tmp/evil/out"
check "a zip with escaping entries exits 4" test "$rc" = 4
check "...nothing lands outside the folder" test ! -e "$tmp/evil/escaped.txt" -a ! -e "$tmp/escaped2.txt" -a ! -e /absolute.txt
check "...no symlink is made" test ! -e "$tmp/evil/out/link-to-passwd" -a ! -L "$tmp/evil/out/link-to-passwd"
check "...the good entry is unpacked" test -s "$tmp/evil/out/$app.zstd"
check "...nothing is written through an existing symlink" test ! -e "$tmp/evil/elsewhere/through-link.txt"
check "...stderr names a refused entry" has "$tmp/err" "../escaped.txt"
# (a C1 CSI in a UTF-8 name; libzip reads ESC in a CP437 name as U+2190)
check "...a refused name reaches stderr without C1 controls" \
    python3 "$src/tests/fetch/no_controls.py" "$tmp/err"
stop_server

start_server spark --app "$app" --logs-garbage
run fetch spark-history "$url" --app "$app" -o "$tmp/garbage"
check "logs that are no zip exit 3" test "$rc" = 3
check "...saying so" has "$tmp/err" "not a readable zip"
stop_server

start_server junk
run fetch spark-history "$url" --app "$app" -o "$tmp/junk"
check "not a History Server exits 3" test "$rc" = 3
stop_server

p=$(free_port)
run fetch spark-history "http://127.0.0.1:$p" --app "$app" --retries 0 -o "$tmp/refused"
check "refused connection exits 3" test "$rc" = 3

finish
