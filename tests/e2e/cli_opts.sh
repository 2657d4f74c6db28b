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
# bash completion offers the same formats (it cannot ask the binary cheaply;
# scripts/gen-docs writes it from the table): analyze's branch of its
# --format case
formats=$(sed -n '/^    --format)/,/return 0 ;;/p' "$src/scripts/completion/optipipe.bash" |
    sed -n 's/^ *"analyze") _optipipe_offer "\([a-z ]*\)" ;;$/\1/p')
from_help=$(sed -n 's/.*(docs\/output-formats.md): \(.*\) -o, --output.*/\1/p' "$tmp/flat" |
    sed 's/ (default)//; s/, / /g')
check "--help names the formats" test -n "$from_help"
check "completion offers the formats --help names" test "$formats" = "$from_help"
# history: one table entry per form, options before or after the form word
run history jbos
usage_error "a mistyped history command" "unknown history command 'jbos' (did you mean 'jobs'?)"
run history runs --limt 3 JOB
usage_error "a mistyped history option" "unknown option '--limt' (did you mean '--limit'?)"
check "... and where to look" has "$tmp/err" "Try 'optipipe history runs --help'."
run history runs --limit=1001 --history "$tmp/h.db" JOB
usage_error "history runs --limit is 1 to 1000" "--limit: expected a whole number from 1 to 1000, not '1001'"
run history --history "$tmp/h.db" prune --keep=0
usage_error "history prune --keep is 1 or more" "--keep: expected a whole number from 1 to"
run history --history "$tmp/h.db" prune --older-than=3y
usage_error "an age without a known unit" "--older-than takes an age like 30d, 12h, 90m or 2w, not '3y'"
run history jobs --metric x
usage_error "an option of another form" "unknown option '--metric'"
run history --format=yaml jobs
usage_error "history --format is text or json" "--format takes text or json, not 'yaml'"
run history jobs extra
usage_error "history jobs takes no words" "history jobs takes no arguments ('extra')"
run history runs
usage_error "history runs needs its JOB" "history runs needs one JOB"
run history --history "$tmp/h.db"
usage_error "options but no history command" "history needs a command: jobs, runs, show, prune, notifications or copy"
run history --help
check "history --help lists its forms" has "$tmp/out" "history prune --keep N|--older-than AGE"
run history --history "$tmp/h.db" runs --help
check "history runs --help, after options too" has "$tmp/out" "--limit N .*at most 1000 (default 30)"
run history --history="$tmp/new.db" --no-config prune --keep=1
check "history --opt=value before the form word" test "$rc" = 0 && has "$tmp/out" "removed 0 runs"
run history jobs --history "$tmp/new.db" --format=json --no-config
check "... and after it" test "$rc" = 0 && has "$tmp/out" "^\[\]"
run history jobs --format=html
usage_error "html is for history runs alone" "--format takes text or json, not 'html'"
run diff --tpo 3 a b
usage_error "a mistyped diff option" "unknown option '--tpo' (did you mean '--top'?)"
run diff --top=1001 a b
usage_error "diff --top is 1 to 1000" "--top: expected a whole number from 1 to 1000, not '1001'"
run diff --format=jsno a b
usage_error "diff --format values" "--format takes text, json, markdown or html, not 'jsno' (did you mean 'json'?)"
run dif a b
usage_error "a mistyped diff" "unknown command 'dif' (did you mean 'diff'?)"
run rules --help
check "rules --help lists its commands" has "$tmp/out" "rules lint"
run fetch --help
check "fetch --help lists both sources" has "$tmp/out" "fetch spark-history"

finish
