#!/usr/bin/env bash
# The option parser as the user meets it: --opt=value as well as --opt
# value, "did you mean" for a mistyped command, subcommand, option or enum
# value (exit 2, the message on stderr, nothing on stdout), and the values
# of --format coming from the reporter table.
# Usage: cli_opts.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"

run() { # run ARGS... : records exit code in $rc
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
usage_error() { # usage_error NAME PATTERN: exit 2, PATTERN on stderr, no stdout
    check "$1: exit 2" test "$rc" = 2
    check "$1: says so on stderr" has "$tmp/err" "$2"
    check "$1: nothing on stdout" test ! -s "$tmp/out"
}

demo="$src/fixtures/demo"

run analyze --format=json --deterministic "$demo"
check "--format=json works" test "$rc" = 0
cp "$tmp/out" "$tmp/eq.json"
run analyze --format json --deterministic "$demo"
check "... like --format json" cmp -s "$tmp/out" "$tmp/eq.json"
run analyze --format=json --rule-timeout-ms=5000 --isolate=never --pack=flink \
    --max-line=1m -o "$tmp/o.json" "$demo"
check "every value option takes =" test "$rc" = 0
check "... -o wrote the report" json_ok "$tmp/o.json"

run analyze --formt json "$demo"
usage_error "a mistyped option" "unknown option '--formt' (did you mean '--format'?)"
check "... and where to look" has "$tmp/err" "Try 'optipipe analyze --help'."
run analyze --fail-on=warnign "$demo"
usage_error "a mistyped enum value" \
    "--fail-on takes info, warning or error, not 'warnign' (did you mean 'warning'?)"
run analyze --format yaml "$demo"
usage_error "an unknown format" "--format takes text, json, markdown, sarif, junit or html, not 'yaml'"
run analyze --quiet=1 "$demo"
usage_error "a flag with a value" "--quiet takes no value"
run analyse "$demo"
usage_error "a mistyped command" "unknown command 'analyse' (did you mean 'analyze'?)"
run rules lsit
usage_error "a mistyped rules command" "unknown rules command 'lsit' (did you mean 'list'?)"
run baseline craete "$demo"
usage_error "a mistyped baseline command" "unknown baseline command 'craete' (did you mean 'create'?)"
run fetch flnik http://127.0.0.1:1
usage_error "a mistyped fetch source" "unknown fetch command 'flnik' (did you mean 'flink'?)"
run fetch flink --smaples 3 http://127.0.0.1:1
usage_error "a mistyped fetch option" "did you mean '--samples'?"
run frobnicate
usage_error "a command far from every other" "unknown command 'frobnicate'"
check "... gets no guess" test "$(grep -c 'did you mean' "$tmp/err")" = 0
run normalize --format text "$demo"
usage_error "normalize writes json only" "--format takes json, not 'text'"

# The --format values in --help are the reporter table's, in its order.
run analyze --help
check "analyze --help exits 0" test "$rc" = 0
check "--help lists every format" has "$tmp/out" "text (default),"
tr -s ' \n' ' ' <"$tmp/out" >"$tmp/flat"
check "... in the table's order" has "$tmp/flat" "text (default), json, markdown, sarif, junit, html"
# bash completion offers the same formats (it cannot ask the binary cheaply)
formats=$(sed -n 's/^ *_optipipe_offer "\(text json[a-z ]*\)"$/\1/p' \
    "$src/scripts/completion/optipipe.bash")
from_help=$(sed -n 's/.*(docs\/output-formats.md): \(.*\) -o, --output.*/\1/p' "$tmp/flat" |
    sed 's/ (default)//; s/, / /g')
check "--help names the formats" test -n "$from_help"
check "completion offers the formats --help names" test "$formats" = "$from_help"
run rules --help
check "rules --help lists its commands" has "$tmp/out" "rules lint"
run fetch --help
check "fetch --help lists both sources" has "$tmp/out" "fetch spark-history"

finish
