# Sourced by guest.sh: sparkd-probe-rdma's failures on a real RDMA stack, each ending at once (well
# before the helper's deadline) with exit status 1 and an error that says what happened:
# the peer's helper killed mid-transfer, an address no GID holds, a memlock limit below the
# buffers, and a peer that becomes unreachable mid-transfer (its link down: the QP's retries
# run out).
mkdir -p "$out/failures"
deadline=60

# result_error FILE: the error of the helper's result line.
result_error() {
        python3 -c 'import json, sys
print(next(json.loads(l)["result"].get("error", "") for l in open(sys.argv[1]) if l.startswith("{\"result\"")))' "$1" 2>/dev/null
}

# expect_failure NAME PID FILE REGEX: waits for the helper PID, which must fail with an error
# matching REGEX within the bound.
expect_failure() {
        name=$1 pid=$2 file=$3 want=$4
        rc=0
        wait "$pid" || rc=$?
        took=$(($(date +%s) - t0))
        err=$(result_error "$file")
        echo "$name: status $rc after $took s: $err"
        [ "$rc" = 1 ] || fail "$name: exit status $rc, expected 1: $(tail -n 3 "$file")"
        echo "$err" | grep -Eq "$want" || fail "$name: the error does not match /$want/"
        [ "$took" -lt $((deadline / 2)) ] || fail "$name: took $took s (deadline $deadline s)"
}

server() {
        sparkd-probe-rdma --server --bind 10.0.0.2 --port 18517 --one-rail --json --deadline $deadline \
                "$@" >"$out/failures/$case.server" 2>&1 &
        spid=$!
        wait_line "$out/failures/$case.server" '"phase":"listening"'
}
client() {
        t0=$(date +%s)
        sparkd-probe-rdma --client 10.0.0.2 --port 18517 --bind 10.0.0.1 --one-rail --json --deadline $deadline \
                "$@" >"$out/failures/$case.client" 2>&1 &
        cpid=$!
}

case=killed
step "failure: the server's helper killed mid-transfer"
server
client --duration 30 --bandwidth --one-way
wait_line "$out/failures/$case.client" '"phase":"connected"'
kill -KILL $spid
wait $spid 2>/dev/null || true
expect_failure "peer killed" $cpid "$out/failures/$case.client" "no RDMA WRITE completed for [0-9]+ s: the link or the peer is gone|work completion on rxe_a0|the peer disconnected"

case=nogid
step "failure: an address no RoCE v2 GID holds"
t0=$(date +%s)
client_out=$out/failures/$case.client
sparkd-probe-rdma --client 10.0.0.2 --port 18517 --bind 10.0.0.77 --json >"$client_out" 2>&1 &
expect_failure "no GID" $! "$client_out" "no RoCE v2 GID of this node's RDMA devices holds 10.0.0.77"

case=memlock
step "failure: memlock below the buffers"
server
t0=$(date +%s)
# As the daemon's own user would, not as root: CAP_IPC_LOCK lets root pin memory past any limit.
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'ulimit -l 512 && exec "$@"' sh \
        $opt/sparkd-probe-rdma --client 10.0.0.2 --port 18517 --bind 10.0.0.1 --one-rail --json \
        --size 1M --qps 4 --iters 10 --bandwidth >"$out/failures/$case.client" 2>&1 &
expect_failure "memlock" $! "$out/failures/$case.client" "RLIMIT_MEMLOCK \(ulimit -l\) is 512 KiB"
kill -KILL $spid 2>/dev/null || true
wait $spid 2>/dev/null || true

case=unreachable
step "failure: the peer unreachable mid-transfer (its link down)"
server
client --duration 30 --bandwidth --one-way
wait_line "$out/failures/$case.client" '"phase":"connected"'
ip link set b0 down
expect_failure "peer unreachable" $cpid "$out/failures/$case.client" "no RDMA WRITE completed for [0-9]+ s: the link or the peer is gone|work completion on rxe_a0: transport retry counter exceeded"
kill -KILL $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
ip link set b0 up
veth_routes 0
rxe_active 4
