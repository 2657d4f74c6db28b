# bash completion for optipipe: commands, sub-commands, options and their
# values. Installed by `cmake --install` as
# share/bash-completion/completions/optipipe (bash-completion loads it on
# first use); without bash-completion: `source` this file in ~/.bashrc.
# Self-contained: needs no helper of the bash-completion package.

_optipipe() {
    local cur prev cmd sub i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cmd=${COMP_WORDS[1]}
    sub=${COMP_WORDS[2]}

    local commands="analyze normalize review baseline rules plugins fetch --version --help"
    local common="--quiet --verbose --help"
    local loads="--config --no-config --rules --pack --no-bundled --plugin-path"
    local limits="--max-line --max-bytes --rule-timeout-ms --rule-memory-mb
        --rule-instructions --rule-pack-timeout-ms --isolate"
    local opts=""

    if [ "$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
        return 0
    fi

    case $prev in
    --format)
        if [ "$cmd" = normalize ]; then
            mapfile -t COMPREPLY < <(compgen -W "json" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "text json markdown sarif junit html" -- "$cur")
        fi
        return 0 ;;
    --fail-on)
        mapfile -t COMPREPLY < <(compgen -W "info warning error" -- "$cur")
        return 0 ;;
    --status)
        mapfile -t COMPREPLY < <(compgen -W "approved dismissed" -- "$cur")
        return 0 ;;
    --isolate)
        mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
        return 0 ;;
    --source)
        mapfile -t COMPREPLY < <(compgen -W "spark dbt flink '*'" -- "$cur")
        return 0 ;;
    --pack)
        mapfile -t COMPREPLY < <(compgen -W "dbt flink mixed spark" -- "$cur")
        return 0 ;;
    --rules | --emit-changes | --plugin-path)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return 0 ;;
    --config | --baseline | -o | --output | --junit | --cacert)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0 ;;
    --reason | --select | --fingerprint | --max-line | --max-bytes | \
    --job | --app | --attempt | --samples | --interval | --timeout | --header | \
    --rule-timeout-ms | --rule-memory-mb | --rule-instructions | --rule-pack-timeout-ms)
        return 0 ;; # free text
    esac

    case $cmd in
    analyze)
        opts="--format --output --fail-on --baseline --no-baseline --show-suppressed
            --emit-changes --all --deterministic $loads $limits $common" ;;
    normalize) opts="--format --output --plugin-path --max-line --max-bytes $common" ;;
    review) opts="--baseline --fingerprint $loads $limits $common" ;;
    baseline)
        if [ "$COMP_CWORD" -eq 2 ]; then
            mapfile -t COMPREPLY < <(compgen -W "create update" -- "$cur")
            return 0
        fi
        opts="--output --status --reason --select --fingerprint --prune $loads $limits $common" ;;
    rules)
        if [ "$COMP_CWORD" -eq 2 ]; then
            mapfile -t COMPREPLY < <(compgen -W "list show test new lint" -- "$cur")
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
            mapfile -t COMPREPLY < <(compgen -W "list" -- "$cur")
            return 0
        fi
        opts="--plugin-path --help" ;;
    fetch)
        if [ "$COMP_CWORD" -eq 2 ]; then
            mapfile -t COMPREPLY < <(compgen -W "flink spark-history" -- "$cur")
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
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
}

complete -o filenames -F _optipipe optipipe
