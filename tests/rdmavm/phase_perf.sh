# Sourced by guest.sh: sparkd-probe-rdma by hand and perftest's ib_write_bw / ib_write_lat on the
# same link (rxe_a0 10.0.0.1 -> rxe_b0 10.0.0.2, GID index 1), the same message size, QPs and
# amount, alternating, RUNS times each. The amount is a count of writes per QP, not a duration:
# both tools then time from the first write posted to the last completion, where perftest's
# duration mode samples a window whose edges, under emulation, swing its figure by 3x. Latency runs
# are short and, under emulation, each lands in a fast or a slow mode as a whole (17 or 40 us for
# either tool, by where the guest's CPUs are): LAT_REPEAT pairs of them per run, so that each
# tool's lower quartile is a figure of the method and not of the placement. perf_table.py prints
# the medians and lower quartiles with their ratios and fails when the probe's figures stray from
# perftest's beyond the bounds it names.
runs=${PERF_RUNS:-5}
lat_repeat=${PERF_LAT_REPEAT:-3}
qps=4
size=65536
iters=${PERF_ITERS:-200}
lat_iters=1000
lat_run=0
mkdir -p "$out/perf"

# tcp_listening PORT: waits until perftest's server listens on its TCP port (its own output is
# block-buffered into a file, so it says nothing until it ends).
tcp_listening() {
        for _ in $(seq 300); do
                [ -n "$(ss -Hltn "sport = :$1")" ] && return 0
                sleep 0.1
        done
        fail "nothing listens on TCP port $1"
}

# perftest TOOL N DIRECTION ARGS...: one perftest run, server on the receiving end; forward is
# a0 -> b0 (the client on a0 writes), reverse b0 -> a0.
perftest() {
        tool=$1 n=$2 dir=$3
        shift 3
        if [ "$dir" = forward ]; then srv=rxe_b0 cli=rxe_a0 dst=10.0.0.2; else srv=rxe_a0 cli=rxe_b0 dst=10.0.0.1; fi
        f=$out/perf/$tool-$dir-$n
        $tool -d $srv -x 1 -F "$@" >"$f.server" 2>&1 &
        spid=$!
        tcp_listening 18515
        $tool -d $cli -x 1 -F "$@" $dst >"$f.client" 2>&1 || fail "$tool $dir run $n: $(tail -n 5 "$f.client")"
        wait $spid || fail "$tool server $dir run $n: $(tail -n 5 "$f.server")"
}

# probe N MODE ARGS...: one sparkd-probe-rdma run between the same devices, a0's client writing.
probe() {
        n=$1 mode=$2
        shift 2
        f=$out/perf/probe-$mode-$n
        sparkd-probe-rdma --server --bind 10.0.0.2 --port 18516 --one-rail --json >"$f.server" 2>&1 &
        spid=$!
        wait_line "$f.server" '"phase":"listening"'
        sparkd-probe-rdma --client 10.0.0.2 --port 18516 --bind 10.0.0.1 --one-rail --json "$@" \
                >"$f.client" 2>&1 || fail "sparkd-probe-rdma $mode run $n: $(tail -n 3 "$f.client")"
        wait $spid || fail "sparkd-probe-rdma server $mode run $n: $(tail -n 3 "$f.server")"
}

for n in $(seq "$runs"); do
        step "run $n of $runs: ib_write_bw both ways, the probe both ways, $lat_repeat times ib_write_lat and the probe's latency"
        for dir in forward reverse; do
                perftest ib_write_bw "$n" $dir -q $qps -s $size -n $iters --report_gbits
        done
        probe "$n" bw --qps $qps --size $size --iters $iters --bandwidth
        # A counter of its own: perftest() and probe() set n (sh has no locals).
        for _ in $(seq "$lat_repeat"); do
                lat_run=$((lat_run + 1))
                perftest ib_write_lat "$lat_run" forward -s 2 -n $lat_iters
                probe "$lat_run" lat --latency --lat-iters $lat_iters --lat-size 2
        done
done
rc=0
python3 "$share/perf_table.py" "$out/perf" "$runs" "$lat_run" >"$out/perf-table.txt" || rc=$?
cat "$out/perf-table.txt"
[ "$rc" = 0 ] || fail "the probe measures unlike perftest (table above)"
