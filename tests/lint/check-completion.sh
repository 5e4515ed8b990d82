#!/usr/bin/env bash
# sparkc's bash completion: commands, options of sparkc and of a command, --kind values and event
# names, completed the way bash would (COMP_WORDS/COMP_CWORD through the completion function).
#
# usage: check-completion.sh SOURCE_ROOT SPARKC
# exit:  0 pass, 1 fail, 77 skip (no bash-completion on this machine)
set -u

src=$1
bindir=$(mktemp -d /tmp/sparkc-completion.XXXXXX)
trap 'rm -rf "$bindir"' EXIT
ln -s "$(readlink -f "$2")" "$bindir/sparkc"
failures=0

for f in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
        [ -f "$f" ] && lib=$f && break
done
[ -n "${lib:-}" ] || { echo "SKIP: bash-completion not installed (Debian: bash-completion)"; exit 77; }

# complete LINE: what the completion offers for LINE (the cursor at its end), sorted, one line.
complete_line() {
        PATH="$bindir:$PATH" SPARKD_SOCKET=/nonexistent bash -c '
                source "$1"
                source "$2"
                line=$3
                read -r -a COMP_WORDS <<<"$line"
                [[ $line == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE=$line
                COMP_POINT=${#line}
                _sparkc sparkc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
        ' _ "$lib" "$src/completion/sparkc.bash" "$1"
}

expect() {      # LINE WANTED...: each WANTED word is offered
        local line=$1 got w
        shift
        got=" $(complete_line "$line")"
        for w in "$@"; do
                if [[ $got != *" $w "* ]]; then
                        echo "FAIL: '$line<TAB>' offers [$got], not $w"
                        failures=$((failures + 1))
                        return
                fi
        done
        echo "ok:   '$line<TAB>' offers $*"
}

expect "sparkc " status peers probe probe-kinds history keygen watch metrics doctor env
expect "sparkc pro" probe probe-kinds
expect "sparkc --" --socket --json --timeout --help --version
expect "sparkc --json pr" probe probe-kinds
expect "sparkc probe --" --peer --kind --duration --size --streams --count --mode --env --param
expect "sparkc probe --peer x --kind " rtt tcp rdma nccl pathmtu all
expect "sparkc history --" --peer --kind --limit
expect "sparkc fabric --" --json --socket --timeout
expect "sparkc env --" --mode --format --force --json
expect "sparkc env --format " sh docker systemd
expect "sparkc " export plan hostfile
expect "sparkc export " sparkrun svd
expect "sparkc export sparkrun --" --name --default --output
expect "sparkc env --for " torchrun ray vllm sglang mpi
expect "sparkc env --check --for " sparkrun svd
expect "sparkc watch link-" link-up link-down link-flapping link-stable
expect "sparkc watch gid" gid-changed
expect "sparkc keygen --" --force
# No daemon on the socket: --peer offers nothing, and quickly.
start=$(date +%s)
got=$(complete_line "sparkc probe --peer ")
[ -z "${got// /}" ] || { echo "FAIL: --peer without a daemon offers [$got]"; failures=$((failures + 1)); }
[ $(($(date +%s) - start)) -le 5 ] || { echo "FAIL: --peer without a daemon took over 5 s"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || { echo "FAIL: $failures completion(s) wrong"; exit 1; }
echo "PASS: sparkc's bash completion"
