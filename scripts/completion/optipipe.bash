# bash completion for optipipe: commands, sub-commands, options and their
# values. Installed by `cmake --install` as
# share/bash-completion/completions/optipipe (bash-completion loads it on
# first use); without bash-completion: `source` this file in ~/.bashrc.
# Self-contained: needs no helper of the bash-completion package.

# Offers the words of $1 that start with the word being completed.
_optipipe_offer() {
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "${COMP_WORDS[COMP_CWORD]}")
}

_optipipe() {
    local cur prev cmd sub i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cmd=${COMP_WORDS[1]}
    sub=${COMP_WORDS[2]}

    local commands="analyze normalize review baseline rules plugins fetch history diff serve --version --help"
    local common="--quiet --verbose --help"
    local loads="--config --no-config --rules --pack --no-bundled --plugin-path"
    local limits="--max-line --max-bytes --rule-timeout-ms --rule-memory-mb
        --rule-instructions --rule-pack-timeout-ms --isolate"
    local opts=""

    if [ "$COMP_CWORD" -eq 1 ]; then
        _optipipe_offer "$commands"
        return 0
    fi

    case $prev in
    --format)
        if [ "$cmd" = normalize ]; then
            _optipipe_offer "json"
        elif [ "$cmd" = diff ]; then
            _optipipe_offer "text json markdown html"
        elif [ "$cmd" = history ] && [ "$sub" = runs ]; then
            _optipipe_offer "text json html"
        elif [ "$cmd" = history ]; then
            _optipipe_offer "text json"
        else
            _optipipe_offer "text json markdown sarif junit html"
        fi
        return 0 ;;
    --fail-on)
        _optipipe_offer "info warning error"
        return 0 ;;
    --status)
        _optipipe_offer "approved dismissed"
        return 0 ;;
    --isolate)
        _optipipe_offer "auto always never"
        return 0 ;;
    --source)
        _optipipe_offer "spark dbt flink '*'"
        return 0 ;;
    --pack)
        _optipipe_offer "dbt flink mixed spark"
        return 0 ;;
    --rules | --emit-changes | --plugin-path | --data)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return 0 ;;
    --config | --baseline | -o | --output | --junit | --cacert | --history | --token-file)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0 ;;
    --reason | --select | --fingerprint | --max-line | --max-bytes | \
    --job | --app | --attempt | --samples | --interval | --timeout | --header | \
    --rule-timeout-ms | --rule-memory-mb | --rule-instructions | --rule-pack-timeout-ms | \
    --listen | --fetch-allow | --public-origin | --max-upload-bytes | --max-files | --threads | \
    --max-connections | --conn-timeout | --workers | --queue | --analysis-timeout | \
    --analysis-memory | --worker)
        return 0 ;; # free text
    esac

    case $cmd in
    analyze)
        opts="--format --output --fail-on --baseline --no-baseline --show-suppressed
            --emit-changes --all --deterministic --allow-rule-errors $loads $limits $common" ;;
    normalize) opts="--format --output --plugin-path --max-line --max-bytes $common" ;;
    review) opts="--baseline --fingerprint $loads $limits $common" ;;
    baseline)
        if [ "$COMP_CWORD" -eq 2 ]; then
            _optipipe_offer "create update"
            return 0
        fi
        opts="--output --status --reason --select --fingerprint --prune $loads $limits $common" ;;
    rules)
        if [ "$COMP_CWORD" -eq 2 ]; then
            _optipipe_offer "list show test new lint"
            return 0
        fi
        case $sub in
        list) opts="$loads $common" ;;
        show)
            opts="$loads $common"
            if [[ $cur != -* ]]; then
                # rule ids, from the rules that would run here
                mapfile -t COMPREPLY < <(compgen -W \
                    "$("${COMP_WORDS[0]}" rules list 2>/dev/null | cut -d' ' -f1)" -- "$cur")
                return 0
            fi ;;
        test) opts="--junit --plugin-path --max-line --max-bytes $limits $common" ;;
        new) opts="--source --force --help" ;;
        lint) opts="$limits $common" ;;
        esac ;;
    plugins)
        if [ "$COMP_CWORD" -eq 2 ]; then
            _optipipe_offer "list"
            return 0
        fi
        opts="--plugin-path --help" ;;
    history)
        if [ "$COMP_CWORD" -eq 2 ]; then
            _optipipe_offer "jobs runs show prune"
            return 0
        fi
        opts="--history --config --no-config --quiet --help"
        case $sub in
        jobs | show) opts="$opts --format" ;;
        runs) opts="$opts --format --metric --limit" ;;
        prune) opts="$opts --keep --older-than" ;;
        esac ;;
    diff)
        opts="--format --output --top --ignore-key --history --config --no-config
            --plugin-path --max-line --max-bytes $common" ;;
    serve)
        opts="--listen --data --token-file --rules --config --allow-rule-upload
            --fetch-allow --public-origin --max-upload-bytes --max-files --threads --max-connections
            --conn-timeout --workers --queue --analysis-timeout --analysis-memory
            --worker --quiet --help" ;;
    fetch)
        if [ "$COMP_CWORD" -eq 2 ]; then
            _optipipe_offer "flink spark-history"
            return 0
        fi
        opts="--output --quiet --timeout --connect-timeout --retries --max-size
            --max-time --max-requests --min-rate --min-rate-time --header
            --token-env --cacert --insecure --help"
        if [ "$sub" = flink ]; then
            opts="$opts --job --all-running --samples --interval
                --backpressure-wait --max-metric-names"
        else
            opts="$opts --app --attempt"
        fi ;;
    esac

    if [[ $cur == -* ]]; then
        _optipipe_offer "$opts"
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
}

complete -o filenames -F _optipipe optipipe
