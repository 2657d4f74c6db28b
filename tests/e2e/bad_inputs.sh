#!/usr/bin/env bash
# bad_inputs.sh OPTIPIPE SRC REAL - runs `optipipe analyze` on every case of
# the hostile-input corpus (tests/bad-inputs/gen.py, written to a temp dir
# here; rule errors, e.g. a timeout on a huge run, are not its subject:
# --allow-rule-errors) under rlimits: CPU time (ulimit -t) always, address space
# (ulimit -v 2 GiB) except under ASan, whose shadow memory needs more.
# Asserts per case: the exit code, that stderr names the bad file (in the
# cleaned form a terminal gets), no control character on stderr, no
# sanitizer report; for mixed folders, that the good files were analyzed.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=$tmp/corpus
fail=0
ncase=0

python3 "$src/tests/bad-inputs/gen.py" "$corpus" >"$tmp/manifest.tsv" || {
    echo "FAIL: gen.py did not write the corpus"; exit 1; }

# run_case NAME ARGS: runs optipipe with limits; sets rc, fills out/err.
run_case() {
    local name=$1 args=$2
    [ "$args" = "-" ] && args=""
    (
        ulimit -t 120
        if [ "${OP_SANITIZE:-0}" != 1 ] && [ "${OP_SANITIZE:-}" != ON ]; then
            ulimit -v $((2 * 1024 * 1024))
        fi
        # shellcheck disable=SC2086
        # -v: a skipped file inside a folder is named too (not only counted)
        exec timeout 180 "$bin" analyze -v --allow-rule-errors $args "$corpus/$name"
    ) >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# term_form NAME: NAME as stderr shows it (core/report_util.c
# report_term_put): CR and tab become a space, other C0 controls and DEL '?'
term_form() {
    printf '%s' "$1" | tr '\r\t' '  ' | tr '\000-\037\177' '?'
}

while IFS=$'\t' read -r name codes named args; do
    ncase=$((ncase + 1))
    shown=$(term_form "$name") # this script's own lines stay clean too
    run_case "$name" "$args"
    ok=1
    case ",$codes," in
        *",$rc,"*) ;;
        *) ok=0; echo "FAIL: $shown: exit $rc, expected one of $codes" ;;
    esac
    case $named in
        -) ;;
        out:*)
            grep -qF "$corpus/${named#out:}" "$tmp/out" ||
                { ok=0; echo "FAIL: $shown: the report does not name ${named#out:}"; } ;;
        *)
            grep -qF "$(term_form "$corpus/$named")" "$tmp/err" ||
                { ok=0; echo "FAIL: $shown: stderr does not name $named"; } ;;
    esac
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$tmp/err"; then
        ok=0; echo "FAIL: $shown: a control character reached stderr"
    fi
    if grep -qE "Sanitizer|runtime error|LeakSanitizer|Segmentation|Aborted" "$tmp/err"; then
        ok=0; echo "FAIL: $shown: sanitizer or crash report"
    fi
    if [ "$ok" = 0 ]; then
        fail=1
        head -c 2000 "$tmp/err" | sed 's/^/    stderr: /'
    else
        echo "ok: $shown (exit $rc)"
    fi
    if [ "$name" = mixed ] && [ "$named" = mixed/a-empty.json ]; then
        for want in "orders-per-minute" "bad-inputs"; do
            grep -qF "$want" "$tmp/out" || {
                fail=1; echo "FAIL: mixed: the good input with run '$want' was not analyzed"; }
        done
    fi
done <"$tmp/manifest.tsv"

echo "$ncase cases"
exit $fail
