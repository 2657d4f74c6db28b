#!/usr/bin/env bash
# docs/cli.md and the program say the same: every command `optipipe --help`
# lists has a "`optipipe CMD` options:" paragraph in docs/cli.md, and the
# options that paragraph names (directly, or through a link to a section
# whose table lists them, in cli.md or fetch.md) are exactly the options
# `optipipe CMD --help` lists. Every option is in some table of the docs,
# and the man page and the bash completion name every option too. And the
# generated docs are current: docs/optipipe.1, the bash completion and the
# tables of docs/cli.md and docs/config.md are what scripts/gen-docs writes
# from `optipipe --dump-options=json` (so a new option, command, engine or
# config key without regenerated docs fails here).
# Usage: cli_docs.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"

"$bin" --help >"$tmp/main.txt" 2>"$tmp/err"
check "--help exits 0" test $? = 0
check "--help lists fetch" grep -q '^  fetch flink' "$tmp/main.txt"

# One file per command: its name, then the options its --help lists.
python3 - "$tmp/main.txt" >"$tmp/commands" <<'EOF'
import re, sys
inside = False
for line in open(sys.argv[1]):
    if line.startswith("Commands:"):
        inside = True
        continue
    if not inside or not line.startswith("  ") or line.startswith("   "):
        continue
    words = []
    for w in line.split():
        if not re.fullmatch(r"[a-z][a-z-]*", w) or w == "optipipe":
            break
        words.append(w)
    if words:
        print(" ".join(words[:2]))
EOF
check "--help lists commands" test -s "$tmp/commands"
while read -r cmd; do
    # shellcheck disable=SC2086
    "$bin" $cmd --help >"$tmp/help" 2>&1
    check "$cmd --help exits 0" test $? = 0
    printf '%s\n' "== $cmd" >>"$tmp/helps"
    cat "$tmp/help" >>"$tmp/helps"
done <"$tmp/commands"

python3 - "$tmp/helps" "$src/docs/cli.md" "$src/docs/fetch.md" \
    "$src/docs/optipipe.1" "$src/scripts/completion/optipipe.bash" \
    >"$tmp/report" <<'EOF'
import re, sys
helps, cli_md, fetch_md, man, completion = sys.argv[1:6]
OPT = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")

pairs = {}  # "-q" <-> "--quiet", as --help shows them

def help_options():
    out, cmd = {}, None
    for line in open(helps):
        if line.startswith("== "):
            cmd = line[3:].strip()
            out[cmd] = set()
            continue
        m = re.match(r"  (-[a-zA-Z], )?(--[a-z][a-z0-9-]*)", line)
        if m and cmd:
            if m.group(1):
                out[cmd].add(m.group(1)[:-2])
                pairs[m.group(1)[:-2]] = m.group(2)
                pairs[m.group(2)] = m.group(1)[:-2]
            out[cmd].add(m.group(2))
    for v in out.values():
        v.discard("-h")
        v.discard("--help")
    return out

def slug(title):
    s = title.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")

def sections(path):
    """anchor -> option names in the first cell of the section's table rows"""
    out, anchor, level = {}, None, 0
    for line in open(path):
        h = re.match(r"(#+) (.*)", line)
        if h:
            anchor = slug(h.group(2))
            out.setdefault(anchor, set())
            continue
        if anchor and line.startswith("| `-"):
            first = line.split(" | ")[0]
            out[anchor].update(OPT.findall(first))
    return out

docs = {"": sections(cli_md), "fetch.md": sections(fetch_md)}

def table_after(paras, i):
    """option names in the first cells of the first table after paras[i]"""
    for para in paras[i + 1:]:
        if para.startswith("| option"):
            return {o for line in para.splitlines() if line.startswith("| `-")
                    for o in OPT.findall(line.split(" | ")[0])}
    return set()

def doc_options():
    out, text = {}, open(cli_md).read()
    paras = [p.strip("\n") for p in re.split(r"\n\s*\n", text)]
    for i, para in enumerate(paras):
        m = re.match(r"`optipipe ([a-z -]+?)` options?:(.*)", para, re.S)
        if not m:
            continue
        cmd, body = m.group(1), m.group(2)
        names = table_after(paras, i) if "table below" in body else set()
        for code in re.findall(r"`([^`]*)`", body):
            names.update(OPT.findall(code))
        for page, anchor in re.findall(r"\]\(([a-z.]*)#([a-z0-9-]+)\)", body):
            sec = docs.get(page, {}).get(anchor)
            if sec is None:
                print(f"{cmd}: link to a missing section {page}#{anchor}")
                continue
            names.update(sec)
        out[cmd] = names
    return out

want = help_options()
got = {c: n | {pairs[o] for o in n if o in pairs} for c, n in doc_options().items()}
tabled = set().union(*docs[""].values(), *docs["fetch.md"].values())
manual = set(OPT.findall(open(man).read().replace("\\-", "-")))
for cmd in sorted(want):
    if cmd not in got:
        print(f"{cmd}: no '`optipipe {cmd}` options:' paragraph in docs/cli.md")
        continue
    for o in sorted(want[cmd] - got[cmd]):
        print(f"{cmd}: {o} is in --help, not in docs/cli.md")
    for o in sorted(got[cmd] - want[cmd]):
        print(f"{cmd}: {o} is in docs/cli.md, not in --help")
for cmd in sorted(set(got) - set(want)):
    print(f"{cmd}: documented, but optipipe --help does not list it")
for o in sorted(set().union(*want.values()) - tabled):
    print(f"{o}: no table row in docs/cli.md or docs/fetch.md says what it does")
for o in sorted(set().union(*want.values()) - manual):
    print(f"{o}: not in docs/optipipe.1")
completes = set(OPT.findall(open(completion).read()))
for o in sorted({o for o in set().union(*want.values()) if o.startswith("--")} - completes):
    print(f"{o}: bash completion (scripts/completion/optipipe.bash) does not offer it")
EOF
check "the docs and --help list the same options" test ! -s "$tmp/report"
[ -s "$tmp/report" ] && sed 's/^/  /' "$tmp/report"

"$bin" --dump-options=json >"$tmp/dump.json" 2>"$tmp/err"
check "--dump-options=json exits 0" test $? = 0
check "... with every command of --help" python3 -c '
import json, sys
names = {c["name"] for c in json.load(open(sys.argv[1]))["commands"]}
missing = [c for c in open(sys.argv[2]).read().split("\n") if c and c not in names]
assert not missing, missing
' "$tmp/dump.json" "$tmp/commands"
python3 "$src/scripts/gen-docs" --dump "$tmp/dump.json" --root "$src" --check \
    >"$tmp/gen.diff" 2>&1
check "the generated docs are current (scripts/gen-docs --check)" test $? = 0
[ -s "$tmp/gen.diff" ] && head -40 "$tmp/gen.diff" | sed 's/^/  /'

# ... and a new option without regenerated docs is caught
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
a = [c for c in d["commands"] if c["name"] == "analyze"][0]
o = dict(a["groups"][0]["options"][0], name="--brand-new", alias=None)
a["groups"][0]["options"].append(o)
json.dump(d, open(sys.argv[2], "w"))
' "$tmp/dump.json" "$tmp/dump-new.json"
python3 "$src/scripts/gen-docs" --dump "$tmp/dump-new.json" --root "$src" --check \
    >"$tmp/gen-new.diff" 2>&1
check "an option the docs lack fails the check" test $? = 1
check "... naming it" has "$tmp/gen-new.diff" "brand-new"

finish
