# Sourced by guest.sh: `sparkc probe --kind rdma` between two daemons, nodea on a0/a1 and nodeb on
# b0/b1. They share the guest's one network namespace: Debian 12's kernel (6.1) opens rxe's UDP
# socket in the initial namespace only, so RDMA traffic between devices whose netdevs live in two
# namespaces never arrives (RDMA CM ends UNREACHABLE). Two daemons in one namespace cannot both
# listen on the peer port, so nodeb listens on 7472 and each node's connects to the other's
# address on its own port are sent on by NAT to the port the other listens on.
"$opt/sparkc" keygen /tmp/cluster.key >/dev/null
nft -f - <<'NFT'
table ip sparkd_peers {
        chain output {
                type nat hook output priority -100;
                ip daddr 10.0.0.2 tcp dport 7471 dnat to 10.0.0.2:7472
                ip daddr 10.0.0.1 tcp dport 7472 dnat to 10.0.0.1:7471
        }
}
NFT
# Each RDMA-backed netdev is a fabric netdev of the host, so each daemon would take all four for
# its own; its host root hides the other node's two (the real /sys and /proc with an empty
# directory over those netdevs', which the inventory then skips as vanished).
host_root() {
        root=/tmp/root-$1
        shift
        mkdir -p $root/sys $root/proc
        mount --bind /sys $root/sys
        mount --bind /proc $root/proc
        for n in "$@"; do mount -t tmpfs tmpfs $root/sys/devices/virtual/net/$n; done
}
host_root nodea b0 b1
host_root nodeb a0 a1
# Under emulation rxe's packet work in the kernel takes both of the guest's CPUs while a probe
# drives two rails, and the daemons' heartbeats wait seconds for them: a generous peer timeout
# keeps the peers up through the probes.
peers='key_file = /tmp/cluster.key\nheartbeat_interval = 300ms\ntimeout = 30s\n'
probe='[probe]\nrtt_interval = 0\nmemory_margin = 0\nexpect_rdma_gbps = 0.01\n[diagnosis]\nstale_min_gbps = 0\nstale_max_gbps = 0.005\nhealthy_gbps = 0.01\n'
# rxe devices have no PCI parent to pair them by: each node names its port's two devices, and
# the probe drives both at once. nodeb runs without CAP_IPC_LOCK, as a daemon's memlock limit
# then binds its helpers (phase_probe_failures.sh lowers it).
sparkd_up nodea "[daemon]\nhost_root = /tmp/root-nodea\n[fabric]\ninterfaces = a0, a1\n[peers]\nstatic = 10.0.0.2\n$peers[probe]\nrdma_twins = rxe_a0 rxe_a1\n$probe"
sparkd_up nodeb "[daemon]\nhost_root = /tmp/root-nodeb\n[fabric]\ninterfaces = b0, b1\n[peers]\nport = 7472\nstatic = 10.0.0.1\n$peers[probe]\nrdma_twins = rxe_b0 rxe_b1\n$probe" \
        setpriv --bounding-set -ipc_lock
peer_up() {
        sparkc --socket /run/$1.sock --json peers | python3 -c '
import json, sys
sys.exit(0 if any(p.get("name") == sys.argv[1] and p.get("state") == "up" for p in json.load(sys.stdin)["peers"]) else 1)' "$2"
}
for _ in $(seq 150); do
        peer_up nodea nodeb && peer_up nodeb nodea && break
        sleep 0.2
done
peer_up nodea nodeb || fail "nodea does not see nodeb up: $(sparkc --socket /run/nodea.sock peers 2>&1)"
step "sparkc probe --peer nodeb --kind rdma"
rc=0
# At the default depth (128 writes of 64 KiB per queue pair) what is in flight when the duration
# ends takes emulated rxe some 7 s a direction to complete, which brought the whole run (35 s)
# to the helper's deadline (36 s): 16 (signalled every 8th) keeps it near its duration.
sparkc --socket /run/nodea.sock --timeout 120 --json probe --peer nodeb --kind rdma --duration 2 \
        --param tx_depth=16 --param cq_mod=8 >"$out/probe.json" 2>&1 || rc=$?
sparkc --socket /run/nodea.sock history --peer nodeb --kind rdma >"$out/probe-history.txt" 2>&1 || true
cat "$out/probe.json"
[ "$rc" = 0 ] || fail "sparkc probe --kind rdma: exit status $rc"
python3 - "$out/probe.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", f"status {d['status']}: {d.get('error')}"
res = d["measured"]
dirs = {x["direction"]: x["gbps"] for x in res["directions"]}
assert set(dirs) == {"forward", "reverse"} and all(g > 0 for g in dirs.values()), f"directions: {dirs}"
# Between the two nodes' devices, not within one.
assert (d["local"], d["remote"]) == ("10.0.0.1", "10.0.0.2"), f"from {d['local']} to {d['remote']}"
# Both twins at once, each moving bytes both ways.
rails = [r["name"] for r in res["rails"]]
assert rails == ["rxe_a0", "rxe_a1"], f"rails {rails}, note: {res.get('note')}"
per = {(x["direction"], r["name"]): r["gbps"] for x in res["directions"] for r in x["rails"]}
assert len(per) == 4 and all(g > 0 for g in per.values()), f"per rail: {per}"
print(f"ok: rdma probe nodea -> nodeb on {' + '.join(rails)}: forward {dirs['forward']} Gb/s, "
      f"reverse {dirs['reverse']} Gb/s, per rail {per}, typical latency {res.get('typical_us')} us")
PY
step "the configured twins in nodea's doctor and environment"
sparkc --socket /run/nodea.sock --json fabric >"$out/twins-fabric.json"
sparkc --socket /run/nodea.sock --json doctor >"$out/twins-doctor.json" || true
sparkc --socket /run/nodea.sock --json env >"$out/twins-env.json" || true
python3 - "$out" <<'PY'
import json, os, sys
load = lambda name: json.load(open(os.path.join(sys.argv[1], name)))
twin = {n["name"]: n["twin"] for n in load("twins-fabric.json")["netdevs"]}
assert (twin.get("a0"), twin.get("a1")) == ("a1", "a0"), f"netdev twins: {twin}"
devs = {d["name"]: d.get("twin") for d in load("twins-fabric.json")["rdma"]["devices"]}
assert (devs.get("rxe_a0"), devs.get("rxe_a1")) == ("rxe_a1", "rxe_a0"), f"RDMA twins: {devs}"
check = {c["id"]: c for c in load("twins-doctor.json")["checks"]}["twins-up"]
assert check["status"] == "ok" and "a0 and a1: both up" in check["evidence"], f"twins-up: {check}"
var = {v["name"]: v for v in load("twins-env.json")["variables"]}["NCCL_IB_HCA"]
# The guest's /sys shows the other node's two devices too (one namespace): a0 and a1 must be there.
hca = var["value"].lstrip("=").split(",")
assert {"rxe_a0:1", "rxe_a1:1"} <= set(hca) and "both twins" in var["why"], f"NCCL_IB_HCA: {var}"
print(f"ok: twins from [probe] rdma_twins: {check['summary']}; NCCL_IB_HCA {var['value']}")
PY
case " $phases " in
*" probe_failures "*) ;; # its daemons serve the failure cases next
*)
        sparkd_down nodea
        sparkd_down nodeb
        ;;
esac
