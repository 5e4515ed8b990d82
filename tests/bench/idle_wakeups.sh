#!/usr/bin/env bash
# Idle cost benchmark: how often an idle sparkd wakes and how much CPU it takes, read from
# /proc/PID/status (voluntary_ctxt_switches: each wait the loop comes back from) and
# /proc/PID/stat (utime + stime) at the start and end of the run. Three daemons side by side,
# each in its own network namespace, none with peers (mdns off, no static peers), the defaults
# otherwise (recheck_interval 60s, set here too), so that nothing is due more often than once a
# minute:
#   idle      no fabric port (the machine's /sys shows no RDMA device in a fresh namespace)
#   counters  a host root with 4 RDMA ports whose counters are read every second
#   off       the same 4 ports with [counters] period = 0
# Goals: idle wakes at most once a minute; counters costs at most 1% of one core.
# Usage (root): tests/bench/idle_wakeups.sh [BUILD_DIR] [SECONDS]   (default 600 s)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
seconds=${2:-600}
export SPARKD_BIN=$build/daemon/sparkd SPARKC_BIN=$build/client/sparkc
for f in "$SPARKD_BIN" "$SPARKC_BIN"; do
        [ -x "$f" ] || { echo "no $f: build first (ninja -C $build)"; exit 1; }
done
. "$here/../integration/lib.sh"

# A host root with 4 RDMA ports (mlx5_0..3 port 1 on eth0..3), each with the counters read.
host=$TEST_TMP/host
for i in 0 1 2 3; do
        port=$host/sys/class/infiniband/mlx5_$i/ports/1
        mkdir -p "$port/counters" "$port/hw_counters" "$port/gid_attrs/ndevs" "$host/sys/class/net/eth$i/statistics"
        echo "eth$i" >"$port/gid_attrs/ndevs/0"
        for c in link_downed excessive_buffer_overrun_errors local_link_integrity_errors symbol_error \
                link_error_recovery port_rcv_errors port_xmit_discards; do echo 0 >"$port/counters/$c"; done
        for c in rnr_nak_retry_err roce_slow_restart out_of_sequence packet_seq_err local_ack_timeout_err; do
                echo 0 >"$port/hw_counters/$c"
        done
        for c in rx_crc_errors rx_bytes tx_bytes; do echo 0 >"$host/sys/class/net/eth$i/statistics/$c"; done
done

conf() {
        printf '[daemon]\nrecheck_interval = 60s\n%s[peers]\nmdns = no\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n%s' "$1" "$2"
}
conf "" "" >"$TEST_TMP/idle.conf"
conf "host_root = $host
" "[counters]
period = 1s
" >"$TEST_TMP/counters.conf"
conf "host_root = $host
" "[counters]
period = 0
" >"$TEST_TMP/off.conf"

names=(idle counters off)
for n in "${names[@]}"; do
        sparkd_start "$n" "$(netns_new "$n")" -c "$TEST_TMP/$n.conf"
done

ticks=$(getconf CLK_TCK)
switches() { awk '/^voluntary_ctxt_switches:/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
declare -A sw0 cpu0
# The start-up's own work is done once the daemons answer twice.
for n in "${names[@]}"; do
        sparkd_caught_up "$n"
        sw0[$n]=$(switches "$(pid_of "$n")")
        cpu0[$n]=$(cpu_ticks "$(pid_of "$n")")
done
start=$(date +%s)
echo "measuring ${seconds}s ..."
sleep "$seconds" # the benchmark is the wait itself: the daemons are left alone for it
elapsed=$(($(date +%s) - start))
printf '%-9s %10s %12s %10s\n' DAEMON WAKEUPS "PER MINUTE" "CPU %"
for n in "${names[@]}"; do
        pid=$(pid_of "$n")
        sw=$(($(switches "$pid") - sw0[$n]))
        cpu=$(($(cpu_ticks "$pid") - cpu0[$n]))
        awk -v n="$n" -v sw="$sw" -v cpu="$cpu" -v t="$elapsed" -v hz="$ticks" \
                'BEGIN { printf "%-9s %10d %12.2f %10.3f\n", n, sw, sw * 60 / t, cpu / hz * 100 / t }'
done
for n in "${names[@]}"; do sparkd_stop "$n"; done
