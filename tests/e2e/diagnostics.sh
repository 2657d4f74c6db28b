#!/usr/bin/env bash
# diagnostics.sh OPTIPIPE SRC REAL - what optipipe prints on stderr
# (docs/cli.md#diagnostics): FILE[:LINE]: warning|error: lines for inputs
# whatever the report format, "optipipe: " for the program's own messages,
# -q dropping warnings but never errors, and no terminal control character
# (ESC, OSC, BEL, CR) from a file name or a parsed value reaching stderr.
# Also: FIFOs and devices are refused by name without blocking.
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"

run() { # run ARGS... : exit code in $rc, stdout/stderr in $tmp/out, $tmp/err
    timeout 60 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# no byte of stderr is a control character other than the newline
clean_err() {
    python3 - "$tmp/err" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
bad = sorted({b for b in data if (b < 0x20 and b != 0x0A) or b == 0x7F})
text = data.decode("utf-8")  # raises on broken UTF-8
bad += [hex(ord(c)) for c in text if 0x80 <= ord(c) <= 0x9F]
sys.exit(1 if bad else 0)
EOF
}

# every warning of the JSON report is on stderr as "FILE[:N]: warning: ..."
json_warnings_on_stderr() {
    python3 - "$tmp/out" "$tmp/err" <<'EOF'
import json, re, sys
try:
    rep = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("the report is not JSON")
err = open(sys.argv[2], encoding="utf-8").read()
want = [w for i in rep["inputs"] for w in i.get("warnings", [])]
want += [w for r in rep["runs"] for w in r.get("warnings", [])]
def clean(s):  # what reaches a terminal (core/report_util.c report_term_put)
    return "".join(" " if c in "\n\t\r" else "?" if ord(c) < 0x20 or
                   0x7F <= ord(c) <= 0x9F else c for c in s)
missing = []
for w in want:
    m = re.match(r"line (\d+): (.*)", w)
    tail = clean(m.group(2) if m else w)
    tail = tail.split(": ", 1)[1] if tail.startswith("/") and ": " in tail else tail
    if not re.search(r": warning: (.*: )?" + re.escape(tail[:60]), err):
        missing.append(w)
for w in missing:
    print("not on stderr:", w)
sys.exit(1 if missing else 0)
EOF
}

spark_ok=$(
    python3 - <<'EOF'
import json
for e in [
    {"Event": "SparkListenerLogStart", "Spark Version": "3.5.0"},
    {"Event": "SparkListenerApplicationStart", "App Name": "diag", "App ID": "app-1",
     "Timestamp": 1700000000000, "User": "u"},
    {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1700000001000,
     "Stage Infos": [], "Stage IDs": []},
    {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 1700000002000,
     "Job Result": {"Result": "JobSucceeded"}},
    {"Event": "SparkListenerApplicationEnd", "Timestamp": 1700000003000},
]:
    print(json.dumps(e))
EOF
)

# --- a hostile file name: ESC ] 0 ; title BEL (retitles the window) and CR --
hostile="$tmp/x"$'\033]0;pwned\007'"y"$'\r'"z.log"
printf 'just some text\n' >"$hostile"
run analyze "$hostile"
check "a hostile name: exit 3" test "$rc" = 3
check "a hostile name reaches stderr cleaned" has "$tmp/err" \
    "x?]0;pwned?y z.log: warning: not recognized by any plugin"
check "... with no control character left" clean_err
run analyze --format json "$hostile"
check "... also under --format json" clean_err
run analyze $'--frob\033[2J'
check "a hostile option is a usage error" test "$rc" = 2
check "... named cleaned" has "$tmp/err" "optipipe: unknown option '--frob?\[2J'"
check "... with no control character left" clean_err

# a hostile value in a parsed input (a run warning about a node id)
cat >"$tmp/hostile-model.json" <<'EOF'
{"schema": 1, "runs": [{"source": "flink", "id": "j",
  "warnings": ["line 7: bad \u001b]0;pwned\u0007 event\r", "$.x: \u009b31m odd"],
  "nodes": [{"id": "a", "parents": ["zz\u001b[31m"]}]}]}
EOF
run analyze --format json "$tmp/hostile-model.json"
check "hostile run warnings: exit 0" test "$rc" = 0
check "... cleaned" clean_err
check "'line N: ' becomes FILE:N: warning:" has "$tmp/err" \
    "hostile-model.json:7: warning: bad ?]0;pwned? event"
check "a JSON place stays in the message" has "$tmp/err" \
    "hostile-model.json: warning: \$.x: ?31m odd"
check "a refused id names the file" has "$tmp/err" \
    'hostile-model.json: warning: node a: parent "zz\\x1b\[31m": refused: the id has a control character'
check "every JSON report warning is on stderr" json_warnings_on_stderr

# --- damaged inputs say so on stderr under --format json ------------------
printf '%s\n' "$spark_ok" | head -c -30 >"$tmp/spark-cut.log"
run analyze --format json "$tmp/spark-cut.log"
check "a cut Spark log: exit 0" test "$rc" = 0
check "... its report is JSON" json_ok "$tmp/out"
check "... stderr has a FILE: warning: line" has "$tmp/err" \
    "spark-cut.log: warning: in progress or cut"
check "... every JSON report warning is on stderr" json_warnings_on_stderr
whole=$src/fixtures/spark/skew.zstd
head -c $(($(wc -c <"$whole") / 2)) "$whole" >"$tmp/spark-cut.zstd"
run analyze --format json "$tmp/spark-cut.zstd"
check "a cut zstd Spark log warns on stderr" has "$tmp/err" \
    "spark-cut.zstd: warning: the zstd stream ends inside a frame"
check "... every JSON report warning is on stderr" json_warnings_on_stderr

# a Flink export whose every value is null
python3 - "$src/fixtures/flink/healthy.json" "$tmp/flink-nulls.json" <<'EOF'
import json, sys
def nul(x):
    if isinstance(x, dict):
        return {k: (v if k == "flink_rest_export" else nul(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [nul(v) for v in x]
    return None
json.dump(nul(json.load(open(sys.argv[1]))), open(sys.argv[2], "w"))
EOF
run analyze --format json "$tmp/flink-nulls.json"
check "a Flink export of nulls: not a crash" test "$rc" -lt 4
check "... every JSON report warning is on stderr" json_warnings_on_stderr
check "... stderr names a null value by its JSON path" has "$tmp/err" \
    'flink-nulls.json: warning: $.responses\["/jobs/[0-9a-f]*"\]\.[a-zA-Z-]*: null where a number is expected: ignored'
check "... and counts the rest" has "$tmp/err" \
    "flink-nulls.json: warning: [0-9]* more values null, of the wrong type or impossible (an export names the first 10)"

# a model and a dbt run_results whose numbers are null or impossible
cat >"$tmp/null-model.json" <<'EOF'
{"schema": 1, "runs": [{"source": "spark", "id": "a", "duration_ms": null,
  "nodes": [{"id": "n", "parallelism": 0}]}]}
EOF
run analyze --format json "$tmp/null-model.json"
check "a model of nulls: exit 0" test "$rc" = 0
check "... stderr names the null" has "$tmp/err" \
    "null-model.json: warning: runs\[1\]: duration_ms: null where an integer is expected: ignored"
check "... and the impossible parallelism" has "$tmp/err" \
    "null-model.json: warning: runs\[1\].nodes\[1\] (node n): parallelism: 0 is outside 1..2147483647: ignored"
check "... every JSON report warning is on stderr" json_warnings_on_stderr
mkdir -p "$tmp/dbt-nulls"
cat >"$tmp/dbt-nulls/run_results.json" <<'EOF'
{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/run-results/v6.json",
  "invocation_id": "nulls", "generated_at": "2024-01-01T00:00:10Z"},
 "results": [{"unique_id": "model.p.x", "status": "success", "execution_time": null,
  "timing": []}], "elapsed_time": null, "args": {}}
EOF
run analyze --format json "$tmp/dbt-nulls/run_results.json"
check "a dbt run_results of nulls: exit 0" test "$rc" = 0
check "... stderr names the null" has "$tmp/err" \
    "run_results.json: warning: .*node model.p.x: execution_time is null where a number is expected"
check "... every JSON report warning is on stderr" json_warnings_on_stderr

# -q drops warnings, never errors
run analyze -q --format json "$tmp/spark-cut.log"
check "-q: no warning" test ! -s "$tmp/err"
printf 'text\n' >"$tmp/unknown.txt"
run analyze -q "$tmp/missing.log" "$tmp/spark-cut.log"
check "-q: an error stays" has "$tmp/err" "missing.log: error: "
check "-q: ... and the warning goes" bash -c "! grep -q ': warning: ' '$tmp/err'"
run analyze -q "$tmp/unknown.txt"
check "-q: 'no input could be read' stays" has "$tmp/err" \
    "optipipe: no input could be read"

# --- FIFOs and devices: refused by name, never blocking -------------------
mkfifo "$tmp/fifo.log"
run analyze "$tmp/fifo.log"
check "a FIFO given directly: exit 3" test "$rc" = 3
check "... named as a FIFO" has "$tmp/err" \
    "fifo.log: error: a FIFO, not a regular file"
run analyze /dev/null
check "a device given directly is named" has "$tmp/err" \
    "/dev/null: error: a character device, not a regular file"
roll="$tmp/logs/eventlog_v2_app-1"
mkdir -p "$roll"
: >"$roll/appstatus_app-1"
mkfifo "$roll/events_1_app-1"
printf '%s\n' "$spark_ok" >"$tmp/logs/good.log"
run analyze "$tmp/logs"
check "a FIFO in a rolling folder does not block (exit 0)" test "$rc" = 0
check "... it is named" has "$tmp/err" \
    "events_1_app-1: a FIFO, not a regular file"
check "... the other input is analyzed" has "$tmp/out" "diag"
echo '{}' | timeout 60 "$bin" analyze - >"$tmp/out" 2>"$tmp/err"
check "stdin '-' is still read" has "$tmp/err" "-: warning: not recognized"

# --- an empty folder ------------------------------------------------------
mkdir "$tmp/empty"
run analyze "$tmp/empty"
check "an empty folder: exit 3, no crash" test "$rc" = 3
check "... no sanitizer report" bash -c \
    "! grep -qE 'Sanitizer|runtime error' '$tmp/err'"

finish
