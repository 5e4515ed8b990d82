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
peers='key_file = /tmp/cluster.key\nheartbeat_interval = 300ms\ntimeout = 3s\n'
sparkd_up nodea "[fabric]\ninterfaces = a0, a1\n[peers]\nstatic = 10.0.0.2\n$peers[probe]\nrtt_interval = 0\n"
sparkd_up nodeb "[fabric]\ninterfaces = b0, b1\n[peers]\nport = 7472\nstatic = 10.0.0.1\n$peers[probe]\nrtt_interval = 0\n"
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
sparkc --socket /run/nodea.sock --timeout 120 --json probe --peer nodeb --kind rdma --duration 2 \
        >"$out/probe.json" 2>&1 || rc=$?
sparkc --socket /run/nodea.sock history --peer nodeb --kind rdma >"$out/probe-history.txt" 2>&1 || true
cat "$out/probe.json"
[ "$rc" = 0 ] || fail "sparkc probe --kind rdma: exit status $rc"
python3 - "$out/probe.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", f"status {d['status']}: {d.get('error')}"
res = d.get("result", d)
dirs = {x["direction"]: x["gbps"] for x in res["directions"]}
assert set(dirs) == {"forward", "reverse"} and all(g > 0 for g in dirs.values()), f"directions: {dirs}"
print(f"ok: rdma probe nodea -> nodeb: forward {dirs['forward']} Gb/s, reverse {dirs['reverse']} Gb/s, "
      f"typical latency {res.get('typical_us')} us")
PY
