#!/usr/bin/env bash
# The layout of the human reports (issue #19, points 3, 4 and 12): the
# text report fits the terminal (100 columns when not a terminal, wrapped
# at word boundaries; $COLUMNS or the window size on one), opens with
# "Start here", shows evidence only with -v and only the first line of a
# multi-line message; every report puts the run with the worst finding
# first; Markdown stays under GitHub's 65 536-character comment limit,
# folded in <details>, and says so when it had to be cut.
# Usage: report_layout.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$2
real=${3:-}
. "$(dirname "$0")/lib/check.sh"
demo=$src/fixtures/demo
unset COLUMNS

# widest FILE [MAX]: succeeds when no line of FILE is wider than MAX
# columns (East Asian wide characters count 2).
widest() {
    python3 - "$1" "${2:-100}" <<'PY'
import sys, unicodedata
worst = max((sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in l.rstrip("\n"))
             for l in open(sys.argv[1], encoding="utf-8")), default=0)
print("widest line:", worst)
sys.exit(0 if worst <= int(sys.argv[2]) else 1)
PY
}
export -f widest

# ---- text: width, start here, evidence ------------------------------------
"$bin" analyze --deterministic "$demo" >"$tmp/out" 2>"$tmp/err"
"$bin" analyze --deterministic --format json "$demo" >"$tmp/demo.json" 2>/dev/null
check "text of the demo: no line over 100 columns in a file" widest "$tmp/out" 100
check "text opens with Start here (line 3)" bash -c "sed -n 3p '$tmp/out' | grep -qx 'Start here:'"
check "Start here names the most severe finding and what to do (lines 4-5)" python3 - "$tmp/out" "$tmp/demo.json" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
top = json.load(open(sys.argv[2]))["findings"][0]
sys.exit(0 if top["rule"] in lines[3] and lines[4].strip().startswith("->") else 1)
PY
check "text wraps at word boundaries: the wrapped message is the message" python3 - "$tmp/out" "$tmp/demo.json" <<'PY'
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
flat = " ".join(text.split())
msgs = [f["message"] for f in json.load(open(sys.argv[2]))["findings"] if len(f["message"]) > 200]
bad = [m for m in msgs if " ".join(m.split()) not in flat]
print("long messages:", len(msgs), "broken:", bad[:1])
sys.exit(0 if msgs and not bad else 1)
PY
check "no evidence lines without -v" bash -c "! grep -q '^ *evidence:' '$tmp/out'"
"$bin" analyze --deterministic -v "$demo" >"$tmp/verbose" 2>/dev/null
check "-v shows evidence" grep -q '^    evidence: .*busy_ratio=0.97' "$tmp/verbose"
"$bin" analyze --deterministic --verbose "$demo" >"$tmp/verbose2" 2>/dev/null
check "--verbose is -v" cmp -s "$tmp/verbose" "$tmp/verbose2"
check "-v still fits 100 columns" widest "$tmp/verbose" 100
COLUMNS=60 "$bin" analyze --deterministic "$demo" >"$tmp/cols" 2>/dev/null
check "not a terminal: COLUMNS is ignored (100)" cmp -s "$tmp/out" "$tmp/cols"

# On a terminal: COLUMNS first, else the window size (TIOCGWINSZ).
on_tty() { # on_tty OUT COLS|- WINSIZE ARGS...: runs the binary on a pty
    python3 - "$@" <<'PY'
import fcntl, os, pty, struct, subprocess, sys, termios
out, cols, win, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, win, 0, 0))
env = dict(os.environ, NO_COLOR="1")
env.pop("COLUMNS", None)
if cols != "-":
    env["COLUMNS"] = cols
p = subprocess.Popen(args, stdout=slave, stderr=subprocess.DEVNULL, env=env)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
p.wait()
open(out, "wb").write(data.replace(b"\r\n", b"\n"))
PY
}
on_tty "$tmp/tty60" 60 120 "$bin" analyze --deterministic "$demo"
check "terminal: wraps at COLUMNS=60" widest "$tmp/tty60" 60
check "terminal: COLUMNS=60 is used (a line is over 50)" bash -c "! widest '$tmp/tty60' 50 >/dev/null"
on_tty "$tmp/tty72" - 72 "$bin" analyze --deterministic "$demo"
check "terminal: wraps at the window width 72" widest "$tmp/tty72" 72
check "terminal: the window width is used (a line is over 64)" bash -c "! widest '$tmp/tty72' 64 >/dev/null"

# ---- the first line of a multi-line message (a stack trace) ----------------
mkdir -p "$tmp/rules"
cat >"$tmp/rules/trace.lua" <<'LUA'
return {
  id = "layout.trace", title = "A stack trace", severity = "error", sources = { "*" },
  check = function(bundle, ctx)
    ctx.report { run = bundle.runs[1],
      message = "Container failed: Exit code 56\nStack trace: ExitCodeException exitCode=56:\n\tat org.apache.hadoop.util.Shell.runCommand(Shell.java:601)",
      evidence = { reason = "Exit code 56\n\tat org.apache.hadoop.util.Shell.run(Shell.java:504)" } }
  end,
}
LUA
"$bin" analyze --deterministic -v --no-bundled --rules "$tmp/rules" "$demo/flink-window-bottleneck.json" \
    >"$tmp/trace" 2>"$tmp/err"
check "text keeps the first line of a stack trace" grep -q 'Container failed: Exit code 56 \[\.\.\.\]' "$tmp/trace"
check "text drops the rest (message and evidence)" bash -c "! grep -q 'org.apache' '$tmp/trace'"
"$bin" analyze --deterministic --format json --no-bundled --rules "$tmp/rules" \
    "$demo/flink-window-bottleneck.json" >"$tmp/trace.json" 2>/dev/null
check "JSON keeps the whole stack trace" grep -q 'exitCode=56:\\n\\tat org.apache.hadoop.util.Shell.runCommand' "$tmp/trace.json"
"$bin" analyze --deterministic --format html --no-bundled --rules "$tmp/rules" \
    "$demo/flink-window-bottleneck.json" >"$tmp/trace.html" 2>/dev/null
check "HTML keeps the whole stack trace" grep -q 'org.apache.hadoop.util.Shell.runCommand' "$tmp/trace.html"

# ---- runs ordered by their worst finding ------------------------------------
# A mixed folder whose only errors are in the run read last.
mkdir -p "$tmp/mixed"
cp "$demo"/* "$tmp/mixed/" 2>/dev/null
cp -r "$demo/dbt" "$tmp/mixed/"
cp "$src/fixtures/spark/failures.zstd" "$tmp/mixed/zz-failures.zstd"
"$bin" analyze --deterministic "$tmp/mixed" >"$tmp/mixed.txt" 2>/dev/null
"$bin" analyze --deterministic --format json "$tmp/mixed" >"$tmp/mixed.json" 2>/dev/null
check "JSON keeps input order: the failing run is last" python3 - "$tmp/mixed.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sys.exit(0 if runs[-1]["id"] == "application_1700000000000_0007" else 1)
PY
check "text: the run with errors comes first" bash -c \
    "grep -m1 -E '^(dbt|flink|spark) ' '$tmp/mixed.txt' | grep -q application_1700000000000_0007"
check "text: Start here opens with its error" bash -c "sed -n 4p '$tmp/mixed.txt' | grep -q '1\. error spark.failures'"
"$bin" analyze --deterministic --format markdown "$tmp/mixed" >"$tmp/mixed.md" 2>/dev/null
check "Markdown: the run with errors comes first" bash -c \
    "grep -m1 '^## [a-z]*: ' '$tmp/mixed.md' | grep -q '^## spark: '"
check "Markdown: Start here opens with its error" grep -q '^1\. .* error `spark.failures`' "$tmp/mixed.md"
"$bin" analyze --deterministic --format html "$tmp/mixed" >"$tmp/mixed.html" 2>/dev/null
check "HTML: the summary table has a severity column, worst first, linked" python3 - "$tmp/mixed.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
table = page[page.index('<table class="runs">'):]
table = table[:table.index("</table>")]
rows = re.findall(r"<tr><td>(.*?)</td>", table)
sevs = [re.search(r"sev-(\w+)", r).group(1) if "sev-" in r else "none" for r in rows]
rank = {"error": 0, "warning": 1, "info": 2, "none": 3}
links = re.findall(r'<td><a href="#(f-[0-9a-f]{16})">', table)
ok = ("<th scope=\"col\">severity</th>" in table and sevs and sevs[0] == "error"
      and sevs == sorted(sevs, key=rank.get) and links and all('id="%s"' % l in page for l in links))
print(sevs)
sys.exit(0 if ok else 1)
PY
check "HTML: Start here links to the findings" python3 - "$tmp/mixed.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
start = page[page.index('aria-label="Start here"'):]
start = start[:start.index("</section>")]
links = re.findall(r'href="#(f-[0-9a-f]{16})"', start)
sys.exit(0 if len(links) == 3 and "sev-error" in start and all('id="%s"' % l in page for l in links) else 1)
PY
check "HTML: the failing run's section comes first" python3 - "$tmp/mixed.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
first = page.index('<section class="run"')
sys.exit(0 if "application_1700000000000_0007" in page[first:first + 400] else 1)
PY

# ---- Markdown size ---------------------------------------------------------
mdlen() { python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$1"; }
balanced() { [ "$(grep -o '<details>' "$1" | wc -l)" = "$(grep -o '</details>' "$1" | wc -l)" ]; }
check "Markdown folds evidence and runs in <details>" bash -c \
    "grep -q '^<details><summary>Evidence</summary>' '$tmp/mixed.md' && grep -q '^<details><summary>[0-9]* finding' '$tmp/mixed.md'"
check "Markdown: <details> balanced" balanced "$tmp/mixed.md"
check "Markdown of the demo is not cut" bash -c "! grep -q 'Truncated' '$tmp/mixed.md'"
# 300 runs with a finding each: far over the limit.
mkdir -p "$tmp/big"
for i in $(seq 1 300); do
    jid=$(printf '%032x' "$i")
    sed "s/6474c426f0469896296248e40b9a1d80/$jid/g" "$src/fixtures/mixed/flink-lone-job.json" \
        >"$tmp/big/job$i.json"
done
"$bin" analyze --deterministic --format markdown "$tmp/big" >"$tmp/big.md" 2>/dev/null
n=$(mdlen "$tmp/big.md")
check "a cut Markdown stays under 65536 characters ($n)" test "$n" -lt 65536
check "a cut Markdown says so, with how many it shows" \
    grep -q '^\*\*Truncated:\*\* this report shows [0-9]* of 300 findings' "$tmp/big.md"
check "a cut Markdown closes its <details>" balanced "$tmp/big.md"
if [ -n "$real" ] && [ -d "$real" ]; then
    "$bin" analyze --deterministic --format markdown "$real" >"$tmp/real.md" 2>/dev/null
    n=$(mdlen "$tmp/real.md")
    check "Markdown of all real inputs under 65536 characters ($n)" test "$n" -lt 65536
    check "Markdown of all real inputs uses <details>" grep -q '<details>' "$tmp/real.md"
    check "Markdown of the real inputs: <details> balanced" balanced "$tmp/real.md"
    "$bin" analyze --deterministic "$real" >"$tmp/real.txt" 2>/dev/null
    check "text of all real inputs fits 100 columns" widest "$tmp/real.txt" 100
else
    echo "NOTICE: real inputs not found ($real): skipping the real-input checks"
fi
finish
