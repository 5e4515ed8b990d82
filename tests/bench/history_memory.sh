#!/usr/bin/env bash
# Memory of a full probe history: resident memory of a daemon that starts on a state directory
# holding 1,000 results, next to one that starts on an empty one, for each build given (so a
# build of an older commit can be set beside this one). The results are real ones repeated
# (lib_bench.sh's real_history). RSS is read from /proc/PID/status after start-up, and again
# after a client asked for the whole history (which an older build parses into trees) and for
# the metrics.
# Goal: the full history adds at most 2 MiB over the empty one.
# Usage (root): tests/bench/history_memory.sh [BUILD_DIR] [OTHER_BUILD_DIR...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib_bench.sh"
bench_use_build "${1:-$here/../../build}"
shift || true
builds=("$build")
for other in "$@"; do builds+=("$(cd "$other" && pwd)"); done
for b in "${builds[@]}"; do
        [ -x "$b/daemon/sparkd" ] || { echo "no $b/daemon/sparkd: build first (ninja -C $b)"; exit 1; }
done
. "$here/../integration/lib.sh"
. "$here/../integration/lib_peers.sh"

full=$TEST_TMP/full.json
real_history "$full" 1000

printf '[peers]\nmdns = no\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$TEST_TMP/alone.conf"
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
declare -A rss rss_asked
i=0
for b in "${builds[@]}"; do
        for state in empty full; do
                name=m$i-$state
                mkdir -p "$TEST_TMP/$name.state"
                [ $state = empty ] || cp "$full" "$TEST_TMP/$name.state/history.json"
                SPARKD=$b/daemon/sparkd sparkd_start "$name" "$(netns_new "$name")" -c "$TEST_TMP/alone.conf"
                sparkd_caught_up "$name"
                rss[$b/$state]=$(rss_kib "$(pid_of "$name")")
                n=$(sparkc_of "$name" --json history --limit 1000 |
                        python3 -c 'import json,sys; print(len(json.load(sys.stdin)["results"]))')
                [ $state = empty ] || [ "$n" = 1000 ] || fail "$name holds $n results, not 1000"
                sparkc_of "$name" metrics >/dev/null
                sparkd_caught_up "$name"
                rss_asked[$b/$state]=$(rss_kib "$(pid_of "$name")")
                sparkd_stop "$name"
        done
        i=$((i + 1))
done

echo
printf '%-40s %12s %12s %12s %16s\n' BUILD "EMPTY KiB" "FULL KiB" "HISTORY KiB" "FULL ASKED KiB"
for b in "${builds[@]}"; do
        printf '%-40s %12d %12d %12d %16d\n' "$(cd "$b/.." && git describe --always --dirty 2>/dev/null || echo "$b")" \
                "${rss[$b/empty]}" "${rss[$b/full]}" $((rss[$b/full] - rss[$b/empty])) "${rss_asked[$b/full]}"
done
echo "goal: HISTORY KiB <= 2048"
