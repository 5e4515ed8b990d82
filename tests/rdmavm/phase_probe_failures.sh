# Sourced by guest.sh after phase_probe.sh, with its two daemons up: `sparkc probe --kind rdma`
# from nodea to nodeb made to fail on the real stack, each case ending with a failed result whose
# error says what happened, well within the probe's deadline, and both daemons answering after
# it: nodeb's helper killed mid-transfer; the RDMA packets to nodeb dropped mid-transfer (the
# queue pairs cannot reach their peer: their retries run out); a GID index that is not the
# address's; nodeb's memlock limit below the buffers (nodeb runs without CAP_IPC_LOCK).
[ -f /tmp/nodeb.pid ] || fail "phase probe_failures needs phase probe's daemons: run it after probe"
pf=$out/probe-failures
mkdir -p "$pf"
# The probe's own deadline for a 20 s probe is well over a minute; each case must end in far less.
bound=30

# probe_start CASE ARGS...: sparkc probe --kind rdma from nodea to nodeb in the background.
probe_start() {
        case=$1
        shift
        t0=$(date +%s)
        sparkc --socket /run/nodea.sock --timeout 150 --json probe --peer nodeb --kind rdma "$@" \
                >"$pf/$case.json" 2>"$pf/$case.err" &
        probe_pid=$!
}

# server_helper: the PID of nodeb's helper (the only server), once it runs.
server_helper() {
        for _ in $(seq 300); do
                pid=$(pgrep -f 'sparkd-probe-rdma .*--server' || true)
                [ -n "$pid" ] && echo "$pid" && return 0
                sleep 0.1
        done
        fail "$case: nodeb's rdma helper never started"
}

# transferring: waits until rxe_a0 has sent a thousand packets more than when the probe began,
# RDMA WRITEs after the connects.
transferring() {
        for _ in $(seq 300); do
                now=$(cat /sys/class/infiniband/rxe_a0/ports/1/hw_counters/sent_pkts)
                [ "$now" -gt $((sent0 + 1000)) ] && return 0
                sleep 0.1
        done
        fail "$case: no RDMA traffic on rxe_a0 ($(cat "$pf/$case.json" 2>/dev/null))"
}

# expect_error REGEX: sparkc must end within the bound with a failed result whose error matches
# REGEX; then both daemons answer and neither keeps the probe (the next one is not refused busy).
expect_error() {
        rc=0
        wait $probe_pid || rc=$?
        took=$(($(date +%s) - t0))
        err=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("status"), "|", d.get("error", ""))' "$pf/$case.json" 2>&1 || cat "$pf/$case.json" "$pf/$case.err")
        echo "$case: sparkc exit $rc after $took s: $err"
        case $err in failed*) ;; *) fail "$case: the probe did not fail" ;; esac
        [ "$rc" = 2 ] || fail "$case: sparkc exit status $rc, expected 2 (failed)"
        echo "$err" | grep -Eq "$1" || fail "$case: the error does not match /$1/"
        [ "$took" -lt $bound ] || fail "$case: took $took s (bound $bound s)"
        for n in nodea nodeb; do
                sparkc --socket /run/$n.sock status >/dev/null || fail "$case: sparkd $n does not answer after it"
        done
        for _ in $(seq 100); do
                pgrep -f sparkd-probe-rdma >/dev/null || return 0
                sleep 0.1
        done
        fail "$case: a helper outlived the probe: $(pgrep -af sparkd-probe-rdma)"
}

step "probe failure: nodeb's helper killed mid-transfer"
sent0=$(cat /sys/class/infiniband/rxe_a0/ports/1/hw_counters/sent_pkts)
probe_start killed --duration 20
spid=$(server_helper)
transferring
kill -KILL "$spid"
expect_error "killed by signal 9|no RDMA WRITE completed|the peer disconnected|work completion on rxe_a"

step "probe failure: the RDMA packets to nodeb dropped mid-transfer"
sent0=$(cat /sys/class/infiniband/rxe_a0/ports/1/hw_counters/sent_pkts)
probe_start unreachable --duration 20
transferring
# RoCE v2 is UDP port 4791; nodeb's packets are dropped where they arrive, so nodea's leave and
# are never acknowledged. (Dropped on the way out instead, rxe sees a local send error and
# retries the send at once, forever, without the queue pair ever failing.)
nft add table ip sparkd_blackhole
nft add chain ip sparkd_blackhole in '{ type filter hook input priority 0; }'
nft add rule ip sparkd_blackhole in ip daddr '{ 10.0.0.2, 10.0.1.2 }' udp dport 4791 drop
expect_error "transport retry counter exceeded|no RDMA WRITE completed for [0-9]+ s"
nft delete table ip sparkd_blackhole

step "probe failure: a GID index that is not the address's"
probe_start wronggid --duration 2 --param gid_index=0
expect_error "GID index 0 of rxe_[ab]0 port 1 is fe80:[0-9a-f:]+ \(RoCE v2\), not the RoCE v2 GID of 10\.0\.0\.[12]; expected 1"

step "probe failure: nodeb's memlock limit below the buffers"
prlimit --pid "$(cat /tmp/nodeb.pid)" --memlock=524288:524288
probe_start memlock --duration 2 --size 1M
expect_error "RLIMIT_MEMLOCK \(ulimit -l\) is 512 KiB"
prlimit --pid "$(cat /tmp/nodeb.pid)" --memlock=unlimited:unlimited
sparkd_down nodea
sparkd_down nodeb
