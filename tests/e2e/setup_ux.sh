#!/usr/bin/env bash
# What a data engineer meets at the terminal (issue #19): skipped files in
# one summary line (named by kind, -q respected, -v lists them, not counted
# as inputs); optipipe.lua and .optipipe-baseline.json found in parent
# folders up to the repository root; the baseline read without --baseline
# (--no-baseline opts out); short fingerprints accepted as prefixes; every
# report saying which config and baseline applied; rules list severities;
# and an installation into a temporary prefix: binary, packs, SDK helpers,
# docs, man page (rendered with man -l when man exists) and bash completion.
# Usage: setup_ux.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
demo=$src/fixtures/demo
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
export SOURCE_DATE_EPOCH=1732870000
export HOME=$tmp/home # the search stops at $HOME: keep it inside the test
mkdir -p "$HOME"

# --- 5. skipped files: one line, by kind --------------------------------
logs=$tmp/logs
mkdir -p "$logs/sub"
cp -r "$demo"/* "$logs/"
for i in 1 2 3; do printf '\x89PNG\r\n\x1a\n0000' >"$logs/sub/shot$i.png"; done
printf 'PK\x05\x06%018d' 0 >"$logs/sub/empty.zip"
printf '%%PDF-1.4\n' >"$logs/sub/doc.pdf"
printf '\x7fELF\x02\x01\x01' >"$logs/sub/tool"
printf 'hello\n' | gzip >"$logs/sub/notes.gz"
op analyze "$logs"
check "skipped files: exit 0" test "$rc" = 0
check "one summary line, by kind" has "$tmp/err" \
    "optipipe: 7 files skipped, not recognized by any plugin (3 PNG image, 1 ELF binary, 1 PDF document, 1 ZIP archive, 1 gzip of unrecognized text); -v lists them"
check "... and no line per file" bash -c "! grep -q 'shot1.png' '$tmp/err'"
check "... no codec jargon" bash -c "! grep -q '(plain)' '$tmp/err'"
check "the header does not count them as inputs" has "$tmp/out" "^opti-pipe 0.1.0: 10 inputs,"
op analyze -q "$logs"
check "-q: no summary either" test ! -s "$tmp/err"
op analyze -v "$logs"
check "-v lists each, with its kind" has "$tmp/err" \
    "sub/shot2.png: warning: not recognized by any plugin (PNG image); skipped"
check "-v: no summary line" bash -c "! grep -q 'files skipped' '$tmp/err'"
op analyze "$logs/sub/doc.pdf" "$demo"
check "a file named on the command line is named" has "$tmp/err" \
    "doc.pdf: warning: not recognized by any plugin (PDF document); skipped"
op analyze --format json "$logs"
check "JSON: a skipped input is marked" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sk = [i for i in d["inputs"] if i.get("skipped")]
assert len(sk) == 7, sk
assert all("not recognized" in i["warnings"][0] for i in sk)' "$tmp/out"

# --- 7. config and baseline found in parents up to the repository root ---
repo=$tmp/repo
mkdir -p "$repo/.git" "$repo/pipelines/daily"
printf 'return { rules = { ["spark.*"] = false } }\n' >"$repo/optipipe.lua"
cd "$repo/pipelines/daily" || exit 1
op analyze "$demo"
check "config found two folders up" has "$tmp/out" \
    "^config: ../../optipipe.lua (0 findings ignored); baseline: none"
check "... and applied" bash -c "! grep -q 'spark\.' '$tmp/out'"
printf 'return { rules = { ["flink.*"] = false } }\n' >"$tmp/optipipe.lua"
mkdir -p "$tmp/repo2/.git" "$tmp/repo2/a"
cd "$tmp/repo2/a" || exit 1
op analyze "$demo"
check "the search stops at the repository root (.git)" bash -c \
    "! grep -q '^config:' '$tmp/out' && grep -q 'flink\.' '$tmp/out'"
mkdir -p "$HOME/proj/x"
printf 'return { rules = { ["dbt.*"] = false } }\n' >"$HOME/optipipe.lua"
cd "$HOME/proj/x" || exit 1
op analyze "$demo"
check "outside a repository: up to the home folder" has "$tmp/out" "^config: ../../optipipe.lua"
mkdir -p "$tmp/norepo/y"
printf 'return { rules = { ["dbt.*"] = false } }\n' >"$tmp/norepo/optipipe.lua"
cd "$tmp/norepo/y" || exit 1
op analyze "$demo"
check "outside both: only the working directory" bash -c "! grep -q '^config:' '$tmp/out'"
cd "$repo/pipelines/daily" || exit 1
op analyze --no-config "$demo"
check "--no-config: none" bash -c "! grep -q '^config:' '$tmp/out'"

# --- 6. decisions: found, applied, said; short fingerprints --------------
op baseline create "$demo"
check "baseline create writes next to the config found" test -f "$repo/.optipipe-baseline.json"
check "... and says where" has "$tmp/err" "../../.optipipe-baseline.json: 8 decision(s) recorded"
op analyze "$demo"
tr '\n' ' ' <"$tmp/out" >"$tmp/out1" # the line may wrap at 100 columns
check "analyze reads the baseline without --baseline" has "$tmp/out1" \
    " config: ../../optipipe.lua (0 findings ignored); baseline: ../../.optipipe-baseline.json (8 findings suppressed)"
check "... and hides the decided findings" has "$tmp/out" ", 0 findings "
op analyze --no-baseline "$demo"
check "--no-baseline opts out" has "$tmp/out" "baseline: none"
check "... every finding is back" has "$tmp/out" ", 8 findings "
op analyze --no-baseline --baseline x.json "$demo"
check "--no-baseline with --baseline: usage error" test "$rc" = 2
op analyze --format markdown "$demo"
check "markdown says what applied" has "$tmp/out" "baseline: ../../.optipipe-baseline.json (8 findings suppressed)"
op analyze --format html "$demo"
check "html says what applied" has "$tmp/out" '<p class="meta applied">config: ../../optipipe.lua'
op analyze --format json "$demo"
check "json says what applied" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["applied"]
assert a == {"config": "../../optipipe.lua", "baseline": "../../.optipipe-baseline.json",
             "ignored_by_config": 0, "suppressed_by_baseline": 8}, a' "$tmp/out"

rm "$repo/.optipipe-baseline.json"
op analyze --no-config "$demo"
fp=$(grep -o '  \[[0-9a-f]\{8\}\]' "$tmp/out" | head -1 | tr -d ' []')
check "text shows an 8-digit fingerprint" test "${#fp}" = 8
op analyze --emit-changes "$tmp/patches" "$demo"
check "--emit-changes without a decisions file: usage error" test "$rc" = 2
check "... saying where it looked" has "$tmp/err" "no decisions file was found"
op baseline update --no-config --fingerprint "$fp" --status approved "$demo"
check "baseline takes the short fingerprint" has "$tmp/err" "1 decision(s) recorded"
check "... recording the full one" grep -q "\"fingerprint\": \"$fp[0-9a-f]\{8\}\"" \
    "$repo/pipelines/daily/.optipipe-baseline.json"
op analyze --no-config "$demo"
check "the new decisions file here is found" has "$tmp/out" \
    "baseline: .optipipe-baseline.json (1 finding suppressed)"
op analyze --no-config --emit-changes "$tmp/patches" "$demo"
check "--emit-changes uses the found decisions file" test "$rc" = 0
op baseline update --no-config --fingerprint 0 "$demo"
check "a too-short prefix is refused" has "$tmp/err" "4 to 16 hex digits"
op baseline update --no-config --fingerprint ffffffff "$demo"
check "an unknown prefix is refused" has "$tmp/err" "no finding of these inputs has it"
op analyze --no-config --no-baseline --format json "$demo"
amb=$(python3 -c '
import json, sys, collections
fps = [f["fingerprint"] for f in json.load(open(sys.argv[1]))["findings"]]
c = collections.Counter(f[:1] for f in fps)
print(next(p for p, n in c.items() if n > 1))' "$tmp/out")
op baseline update --no-config --fingerprint "${amb}" "$demo"
check "a one-digit prefix is refused" test "$rc" = 2
fp2=$(grep -o '  \[[0-9a-f]\{8\}\]' <("$bin" analyze --no-config --no-baseline "$demo") | sed -n 2p | tr -d ' []')
printf 'a\n' | "$bin" review --no-config --fingerprint "${fp2:0:6}" "$demo" >"$tmp/out" 2>"$tmp/err"
check "review --fingerprint PREFIX asks about that finding only" has "$tmp/out" \
    "1 approved, 0 dismissed, 0 skipped, 0 left"

# --- 10. rules list severities, installation -------------------------------
cd "$tmp" || exit 1
op rules list --no-config
check "rules list shows the severities a rule can emit" has "$tmp/out" \
    "^spark.failures  *info|warning|error  *spark"
check "... one when the rule sets none" has "$tmp/out" "^spark.gc  *warning  *spark"
op rules show --no-config dbt.failures
check "rules show: can emit" has "$tmp/out" "^can emit:    info|warning|error"

build=$(dirname "$bin")
if [ ! -f "$build/cmake_install.cmake" ] || ! command -v cmake >/dev/null 2>&1; then
    echo "notice: no install check (not a CMake build tree, or no cmake)"
else
    prefix=$tmp/prefix
    cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1
    check "cmake --install into a temporary prefix" test $? = 0
    for f in bin/optipipe share/optipipe/rules/flink/bottleneck.lua \
             share/optipipe/lua/optipipe/stats.lua \
             share/optipipe/docs/rules/flink.bottleneck.md \
             share/optipipe/docs/writing-rules.md share/man/man1/optipipe.1 \
             share/bash-completion/completions/optipipe; do
        check "installed: $f" test -f "$prefix/$f"
    done
    "$prefix/bin/optipipe" rules show --no-config flink.bottleneck >"$tmp/out" 2>"$tmp/err"
    check "installed rules show: the installed file" has "$tmp/out" \
        "^file:        $prefix/share/optipipe/rules/flink/bottleneck.lua"
    check "... and docs page" has "$tmp/out" \
        "^docs:        $prefix/share/optipipe/docs/rules/flink.bottleneck.md"
    (mkdir -p "$tmp/scaffold" && cd "$tmp/scaffold" &&
        "$prefix/bin/optipipe" rules new team/sla >/dev/null 2>&1)
    check "installed scaffold points to the installed docs" grep -q \
        "^-- The rule API: $prefix/share/optipipe/docs/writing-rules.md" "$tmp/scaffold/team/sla.lua"
    check "... and SDK helpers" grep -q "$prefix/share/optipipe/lua/optipipe/" \
        "$tmp/scaffold/team/sla.lua"
    "$prefix/bin/optipipe" analyze --no-config "$demo" >"$tmp/out" 2>"$tmp/err"
    check "the installed binary analyzes" has "$tmp/out" "^opti-pipe 0.1.0: 10 inputs"
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=80 man -l "$prefix/share/man/man1/optipipe.1" >"$tmp/man.txt" 2>"$tmp/man.err"
        check "man -l renders optipipe(1)" grep -q "^OPTIPIPE(1)" "$tmp/man.txt"
        check "... with the options and FILES" bash -c \
            "grep -q -- '--no-baseline' '$tmp/man.txt' && grep -q '^FILES' '$tmp/man.txt'"
    else
        echo "notice: man is not installed: optipipe(1) not rendered"
    fi
    complete_words() { # complete_words WORD...: what completion offers
        bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                 _optipipe; printf "%s\n" "${COMPREPLY[@]}"' _ \
            "$prefix/share/bash-completion/completions/optipipe" "$@"
    }
    out=$(complete_words optipipe a)
    check "completion offers the commands" test "$out" = analyze
    out=$(complete_words optipipe analyze --no-)
    check "completion offers options" test "$(printf '%s\n' $out | sort | xargs)" = "--no-baseline --no-bundled --no-config --no-notify"
    out=$(complete_words optipipe analyze --format s)
    check "completion offers option values" test "$out" = sarif
    out=$(complete_words optipipe rules s)
    check "completion offers sub-commands" test "$out" = show
    out=$(PATH=$prefix/bin:$PATH complete_words optipipe rules show flink.bott)
    check "completion offers rule ids" test "$out" = flink.bottleneck
fi

finish
