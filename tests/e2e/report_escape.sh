#!/usr/bin/env bash
# Escaping in every format, end to end: a Flink export and a dbt history
# whose job, vertex, model and thread names carry <script>, a Markdown
# link to javascript:, backticks, pipes, ANSI escapes and C1 controls, and
# a rule pack repeating them in evidence keys, change targets and values
# (tests/e2e/report_hostile.py). Then:
#   text      no control character reaches the terminal
#   markdown  rendered by cmark-gfm as GitHub would (tables, autolinks,
#             tag filter): no HTML element but the report's own, no link,
#             no image, every table row with its two cells
#   html      parsed: one script element (ours), no event handler, links
#             only to the page's own anchors, the names shown as text
#   junit     well-formed XML without control characters
#   json      parses, and no raw "<" (safe inside HTML)
# (SARIF: tests/e2e/report_sarif.sh.)
# Usage: report_escape.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=/nonexistent


mkdir -p "$tmp/in"
python3 "$src/tests/e2e/report_hostile.py" "$src" "$tmp/in"
for fmt in text json markdown junit html; do
    "$bin" analyze --format "$fmt" --deterministic --rules "$tmp/in/rules" \
        "$tmp/in/flink.json" "$tmp/in/dbt" >"$tmp/out.$fmt" 2>"$tmp/err.$fmt"
    check "$fmt report of hostile names exits 0" test $? = 0
    check "$fmt report names the hostile rule" grep -q "evil.names" "$tmp/out.$fmt"
done

no_controls() {
    python3 - "$1" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
bad = [(i, hex(ord(c))) for i, c in enumerate(text)
       if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
assert not bad, bad[:5]
PY
}
for fmt in text markdown junit html; do
    check "$fmt has no control characters" no_controls "$tmp/out.$fmt"
done

check "junit is well-formed XML" python3 -c '
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
assert doc.getElementsByTagName("testsuite"), "no testsuite"
assert "<script>" in doc.toxml("utf-8").decode().replace("&lt;", "<").replace("&gt;", ">")
' "$tmp/out.junit"

check "json parses and carries no raw <" python3 -c '
import json, sys
text = open(sys.argv[1]).read()
json.loads(text)
assert "<" not in text
' "$tmp/out.json"

check "html: one script, no handlers, no foreign links" python3 - "$tmp/out.html" <<'PY'
import sys
from html.parser import HTMLParser

class Audit(HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts = 0
        self.problems = []
        self.text = []
    def handle_starttag(self, tag, attrs):
        if tag in ("script",):
            self.scripts += 1
        if tag in ("iframe", "object", "embed", "img", "link", "base", "form"):
            self.problems.append("element <%s>" % tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append("handler %s" % name)
            if name in ("href", "src", "xlink:href") and not (value or "").startswith(("#run-", "#")):
                self.problems.append("%s=%r" % (name, value))
    def handle_data(self, data):
        self.text.append(data)

a = Audit()
a.feed(open(sys.argv[1], encoding="utf-8").read())
assert a.scripts == 1, "script elements: %d" % a.scripts
assert not a.problems, a.problems[:5]
text = "".join(a.text)
assert "<script>alert(1)</script>" in text, "hostile names are shown as text"
PY

if command -v cmark-gfm >/dev/null 2>&1; then
    cmark-gfm --extension table --extension autolink --extension strikethrough \
        --extension tagfilter "$tmp/out.markdown" >"$tmp/md.html"
    check "markdown renders to no foreign HTML, link or image" python3 - "$tmp/md.html" <<'PY'
import sys
from html.parser import HTMLParser

ALLOWED = {"h1", "h2", "h3", "p", "strong", "code", "pre", "table", "thead", "tbody",
           "tr", "th", "td", "ul", "ol", "li",
           "details", "summary"}  # ours: the folded runs and evidence

class Audit(HTMLParser):
    def __init__(self):
        super().__init__()
        self.bad = []
        self.rows = []
        self.cells = None
        self.text = []
    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.bad.append(tag)
        if tag == "tr":
            self.cells = 0
        if tag in ("td", "th") and self.cells is not None:
            self.cells += 1
    def handle_endtag(self, tag):
        if tag == "tr":
            self.rows.append(self.cells)
            self.cells = None
    def handle_data(self, data):
        self.text.append(data)

a = Audit()
a.feed(open(sys.argv[1], encoding="utf-8").read())
assert not a.bad, "unexpected elements: %s" % sorted(set(a.bad))
assert all(n == 2 for n in a.rows), "a table row lost its cells: %s" % a.rows
text = "".join(a.text)
assert "<script>alert(1)</script>](javascript:alert(1))" in text, "names survive as text"
assert "\n+ fake: line" not in text, "a value forged a diff line"
PY
else
    echo "notice: cmark-gfm is not installed (apt-get install cmark-gfm): Markdown rendering not checked"
fi

finish
