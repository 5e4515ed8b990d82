# bash completion for sparkc: commands and their options, --kind values and event names from
# `sparkc --help` (so they follow the client that is installed), peer and node names from the running daemon.

_sparkc_peers()
{
        # One short request to the local socket; nothing when the daemon is not there.
        sparkc --timeout 1 "$@" peers 2>/dev/null | awk 'f && NF { print $1 } /^PEER / { f = 1 }'
}

_sparkc_nodes()
{
        # Every node of the cluster view: the first word of each line under the NODE header.
        sparkc --timeout 1 "$@" cluster 2>/dev/null | awk 'f && /^$/ { exit } f && /^[^ ]/ { print $1 } /^NODE / { f = 1 }'
}

# _sparkc_help_list TITLE: the names `sparkc --help` lists on its line starting with TITLE (and the
# indented lines that continue it), e.g. "Probe kinds: rtt, tcp, ... (a remark)".
_sparkc_help_list()
{
        sparkc --help 2>/dev/null | awk -v t="$1" '
                index($0, t) == 1 { f = 1; sub(/^[^:]*: /, ""); sub(/ \(.*/, ""); print; next }
                f && /^ / { print; next }
                { f = 0 }' | tr -s ', ' '  '
}

_sparkc()
{
        local cur prev words cword
        _init_completion -s || return

        local global_opts='--socket --json --timeout --help --version'

        # The command is the first word that is no option and no option's argument; options
        # before it are sparkc's own. A --socket anywhere (sparkc takes its options on either
        # side of the command) is the one peer lookups need too.
        local i cmd= sock=()
        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                --socket)
                        sock=(--socket "${words[i + 1]}")
                        ((i++))
                        ;;
                -s)
                        [[ -n $cmd ]] || sock=(--socket "${words[i + 1]}")
                        ((i++))
                        ;;
                --timeout | -t) ((i++)) ;;
                --socket=*) sock=("${words[i]}") ;;
                -*) ;;
                *) [[ -n $cmd ]] || cmd=${words[i]} ;;
                esac
        done

        if [[ -z $cmd ]]; then
                case $prev in
                -s | --socket)
                        _filedir
                        return
                        ;;
                -t | --timeout) return ;;
                esac
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
                else
                        local commands
                        commands=$(sparkc --help 2>/dev/null | awk '/^Commands:/ { f = 1; next }
                                f && /^$/ { exit } f && /^  [a-z]/ { print $1 }')
                        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                fi
                return
        fi

        case $prev in
        --peer)
                COMPREPLY=($(compgen -W "$(_sparkc_peers "${sock[@]}")" -- "$cur"))
                return
                ;;
        --kind)
                COMPREPLY=($(compgen -W "$(_sparkc_help_list 'Probe kinds:') all" -- "$cur"))
                return
                ;;
        --matrix)
                COMPREPLY=($(compgen -W "$(_sparkc_help_list 'Probe kinds:')" -- "$cur"))
                return
                ;;
        --node)
                COMPREPLY=($(compgen -W "$(_sparkc_nodes "${sock[@]}")" -- "$cur"))
                return
                ;;
        --nodes)
                # probe --kind nccl --nodes A,B,...: the next name after the last comma
                local done=${cur%"${cur##*,}"}
                COMPREPLY=($(compgen -P "$done" -W "$(_sparkc_nodes "${sock[@]}")" -- "${cur##*,}"))
                return
                ;;
        --mode)
                COMPREPLY=($(compgen -W 'auto safe dmabuf' -- "$cur"))
                return
                ;;
        --format)
                if [[ $cmd == doctor ]]; then
                        COMPREPLY=($(compgen -W 'text line npd' -- "$cur"))
                elif [[ $cmd == topology ]]; then
                        COMPREPLY=($(compgen -W 'table dot' -- "$cur"))
                elif [[ $cmd == hostfile ]]; then
                        COMPREPLY=($(compgen -W 'openmpi mpich plain' -- "$cur"))
                else
                        COMPREPLY=($(compgen -W 'sh docker systemd' -- "$cur"))
                fi
                return
                ;;
        --for)
                # env --check --for takes a launcher's file to compare with the plan
                if [[ " ${words[*]} " == *" --check "* ]]; then
                        COMPREPLY=($(compgen -W 'sparkrun svd' -- "$cur"))
                else
                        COMPREPLY=($(compgen -W 'torchrun ray vllm sglang mpi' -- "$cur"))
                fi
                return
                ;;
        --output)
                if [[ " ${words[*]} " == *" sparkrun "* ]]; then
                        _filedir -d
                else
                        _filedir
                fi
                return
                ;;
        --socket | --from)
                _filedir
                return
                ;;
        --node)
                COMPREPLY=($(compgen -W "$(_sparkc_peers "${sock[@]}")" -- "$cur"))
                return
                ;;
        --name | --duration | --size | --streams | --count | --limit | --env | --param | --timeout | --slots) return ;;
        --check) [[ $cmd == env ]] || return ;;
        esac

        case $cmd in
        keygen)
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W '--force --help' -- "$cur"))
                else
                        _filedir
                fi
                return
                ;;
        watch)
                COMPREPLY=($(compgen -W "$(_sparkc_help_list 'Events') --help" -- "$cur"))
                return
                ;;
        export)
                if [[ $cur != -* && " ${words[*]} " != *" sparkrun "* && " ${words[*]} " != *" svd "* ]]; then
                        COMPREPLY=($(compgen -W 'sparkrun svd' -- "$cur"))
                        return
                fi
                ;;
        env)
                # the file after env --check --for sparkrun|svd
                if [[ $cur != -* && ($prev == sparkrun || $prev == svd) ]]; then
                        _filedir
                        return
                fi
                ;;
        esac
        if [[ $cur == -* ]]; then
                # `sparkc CMD --help` prints the command's usage line, options included.
                local opts
                opts=$(sparkc "$cmd" --help 2>/dev/null | head -n 1 | grep -o -- '--[a-z-]*')
                COMPREPLY=($(compgen -W "$opts --json --socket --timeout --help" -- "$cur"))
        fi
} && complete -F _sparkc sparkc
