#!/usr/bin/env bash
# The engine table (core/engine.h, docs/architecture.md): the SDK example's
# host code (sdk/examples/plugin-csv/host/) registers charts, CSS, a fetch
# and an option of its own with no core or CLI edit: the charts and their
# CSS are in the HTML report of a csv input, `fetch csv` is a command with
# its --help, its --csv-rows option reaches the engine's struct (a
# loopback server, port chosen by the kernel and read from a fifo), and
# --dump-options (the docs' source) lists it; the built-in engines'
# entries answer `optipipe fetch` by their fetch names.
# Usage: engine_table.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
plugins=$(dirname "$bin")/plugins
if [ ! -f "$plugins/optipipe-csv.so" ]; then
    echo "SKIP: $plugins/optipipe-csv.so not built (make optipipe-csv)"
    exit 77
fi

"$bin" analyze --no-config --plugin-path "$plugins" --format html -o "$tmp/csv.html" \
    "$src/fixtures/csv/tasks.csv" >"$tmp/out" 2>"$tmp/err"
check "a csv input analyzes" test $? = 0
E2E_OUT=$tmp/csv.html
check "the example engine's chart is in the report" has "$tmp/csv.html" 'data-chart="csv-stages"'
check "... with its data table" has "$tmp/csv.html" 'Stages as a table'
check "... and no 'No chart' note" sh -c "! grep -q 'No chart for this run' '$tmp/csv.html'"
check "... in the engine's own CSS classes" has "$tmp/csv.html" 'class="csv-max"'
check "... whose rules are in the stylesheet" has "$tmp/csv.html" '.csv-max{fill:'
check "... after the report's own" has "$tmp/csv.html" '.finding{background:none}}'
E2E_OUT=$tmp/out

"$bin" --help >"$tmp/out" 2>"$tmp/err"
check "optipipe --help lists the example's fetch" has "$tmp/out" "fetch csv URL"
"$bin" fetch csv --help >"$tmp/out" 2>"$tmp/err"
check "fetch csv --help: exit 0" test $? = 0
check "... with the engine's option" has "$tmp/out" "--csv-rows N"
check "... and the connection options" has "$tmp/out" "--connect-timeout"
"$bin" analyze --help >"$tmp/out" 2>"$tmp/err"
check "analyze takes it for URL inputs" has "$tmp/out" "--csv-rows N"
"$bin" --dump-options=json >"$tmp/dump.json" 2>"$tmp/err"
check "--dump-options=json: exit 0" test $? = 0
check "... naming the option's owner" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["commands"] if c["name"] == "fetch csv"][0]
g = [g for g in c["groups"] if g["engine"] == "csv"][0]
assert g["options"][0]["name"] == "--csv-rows", g
assert g["options"][0]["type"] == "int" and g["options"][0]["default"] == "0"
' "$tmp/dump.json"

# A loopback server for the csv: it writes its port into a fifo once it
# listens (the read below waits for that, no sleep).
mkfifo "$tmp/port"
python3 -c '
import http.server, sys
body = open(sys.argv[1], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/tasks.csv" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
try:
    s = http.server.HTTPServer(("127.0.0.1", 0), H)
    port = s.server_address[1]
except OSError as e:  # the reader of the fifo must not wait forever
    print(e, file=sys.stderr)
    s, port = None, 0
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % port)
if s:
    s.serve_forever()
' "$src/fixtures/csv/tasks.csv" "$tmp/port" 2>"$tmp/server.log" &
server=$!
read -r port <"$tmp/port"
check "the csv server listens" test "$port" != 0
rows=$(($(wc -l <"$src/fixtures/csv/tasks.csv") - 1))
"$bin" fetch csv "http://127.0.0.1:$port/tasks.csv" -o "$tmp/all.csv" >"$tmp/out" 2>"$tmp/err"
check "fetch csv: exit 0" test $? = 0
check "... the whole file" cmp -s "$tmp/all.csv" "$src/fixtures/csv/tasks.csv"
"$bin" fetch csv "http://127.0.0.1:$port/tasks.csv" --csv-rows 2 >"$tmp/two.csv" 2>"$tmp/err"
check "fetch csv --csv-rows 2: exit 0" test $? = 0
check "... the header and 2 rows" test "$(wc -l <"$tmp/two.csv")" = 3
check "... the rest counted on stderr" has "$tmp/err" "$((rows - 2)) row(s) left out (--csv-rows 2)"
"$bin" analyze --no-config --plugin-path "$plugins" --format json --csv-rows 1 \
    "http://127.0.0.1:$port/tasks.csv" >"$tmp/out" 2>"$tmp/err"
check "analyze URL.csv: the csv engine fetches it (exit 0)" test $? = 0
check "... with the option applied" has "$tmp/err" "row(s) left out (--csv-rows 1)"
check "... into a csv run" has "$tmp/out" '"source": "csv"'
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null

"$bin" fetch nosuch http://127.0.0.1:9 >"$tmp/out" 2>"$tmp/err"
check "an unknown fetch: exit 2" test $? = 2
check "... naming the engines' fetches" has "$tmp/err" "(flink, spark-history or csv)"
"$bin" fetch spark-history http://127.0.0.1:9 >"$tmp/out" 2>"$tmp/err"
check "a folder fetch still asks for --app" has "$tmp/err" "spark-history needs --app APP_ID"
finish
