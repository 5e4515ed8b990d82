# LLDP helpers for integration tests, sourced after lib.sh and lib_peers.sh: nodes each with its
# own lldpd (own control socket and hostname, made with unshare --uts) and its own sparkd reading
# that lldpd. lib_cluster.sh cables them as rings, meshes and switches.

command -v lldpd >/dev/null || skip "needs lldpd (Debian: lldpd)"
command -v lldpcli >/dev/null || skip "needs lldpcli (Debian: lldpd)"
command -v unshare >/dev/null || skip "needs unshare (util-linux)"

declare -A NODE_NS=()

lldp_sock_of() { echo "$TEST_TMP/lldpd-$1.sock"; }

# lldpd_start NAME NS IFACES: an lldpd as host NAME in NS, on IFACES (comma-separated), sending
# every second so neighbours show within a few seconds.
lldpd_start() {
        local name=$1 ns=$2 ifaces=$3 sock pid
        sock=$(lldp_sock_of "$name")
        ip netns exec "$ns" unshare --uts sh -c "hostname $name; exec lldpd -d -u $sock -I '$ifaces'" \
                >>"$TEST_TMP/lldpd-$name.log" 2>&1 &
        pid=$!
        DAEMON_PIDS+=("$pid")
        DAEMON_PID_OF[lldpd-$name]=$pid
        wait_until 10 lldpcli -u "$sock" show configuration || fail "lldpd of $name did not start"
        lldpcli -u "$sock" configure lldp tx-interval 1 >/dev/null || fail "lldpd of $name: tx-interval 1 refused"
}

# sparkd_call NAME METHOD: the raw result of an API method of NAME's daemon, as JSON.
sparkd_call() {
        python3 - "$(sock_of "$1")" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": sys.argv[2]}) + "\n").encode())
buf = b""
while b"\n" not in buf:
    chunk = s.recv(1 << 20)
    if not chunk:
        sys.exit("connection closed")
    buf += chunk
reply = json.loads(buf.partition(b"\n")[0])
if "error" in reply:
    sys.exit(json.dumps(reply["error"]))
print(json.dumps(reply["result"], sort_keys=True))
PY
}

# lldp_node_start NAME NS IFACES STATIC [EXTRA...]: lldpd and sparkd of node NAME, managing IFACES
# (space-separated names or globs), peering with STATIC.
lldp_node_start() {
        local name=$1 ns=$2 ifaces=$3 static=$4
        shift 4
        NODE_NS[$name]=$ns
        lldpd_start "$name" "$ns" "${ifaces// /,}"
        peer_conf "$name" "$ifaces" "$static" "[fabric]" "lldpd_socket = $(lldp_sock_of "$name")" "$@"
        sparkd_start "$name" "$ns" -c "$TEST_TMP/$name.conf"
}

# neighbour_of NAME NETDEV PYEXPR: PYEXPR over the neighbour `nb` NAME's daemon lists on NETDEV.
neighbour_of() {
        local json
        json=$(sparkd_call "$1" neighbours 2>/dev/null) || { echo None; return; }
        json_get "$json" "[eval('''$3''', {'nb': p['neighbour']}) if p['neighbour'] else None for p in d['ports'] if p['netdev'] == '$2'][0]"
}

# lldp_agrees NAME: true when NAME's neighbours (LLDP ones) are what `lldpcli show neighbors`
# says for each port: chassis id, system name, port id and description.
lldp_agrees() {
        local ours theirs
        ours=$(sparkd_call "$1" neighbours) || return 1
        theirs=$(lldpcli -u "$(lldp_sock_of "$1")" -f keyvalue show neighbors) || return 1
        python3 - "$ours" "$theirs" <<'PY'
import json, sys
ours = json.loads(sys.argv[1])
kv = {}
for line in sys.argv[2].splitlines():
    k, _, v = line.partition("=")
    kv[k] = v
theirs = {}
for k, v in kv.items():
    parts = k.split(".")
    if len(parts) >= 4 and parts[0] == "lldp":
        theirs.setdefault(parts[1], {})[".".join(parts[2:])] = v
mine = {p["netdev"]: p["neighbour"] for p in ours["ports"] if p["neighbour"] and p["neighbour"]["source"] == "lldp"}
if set(mine) != set(theirs):
    sys.exit("ports with neighbours differ: sparkd %s, lldpcli %s" % (sorted(mine), sorted(theirs)))
for port, nb in mine.items():
    t = theirs[port]
    cid = next((v for k, v in t.items() if k.startswith("chassis.") and k.endswith(".id") or k == "chassis.mac"), None)
    want = {"sysname": t.get("chassis.name"), "port_id": t.get("port.ifname") or t.get("port.mac") or t.get("port.local"),
            "port_descr": t.get("port.descr")}
    for key, value in want.items():
        if nb[key] != value:
            sys.exit("%s: %s is %r in sparkd, %r in lldpcli" % (port, key, nb[key], value))
    if cid is not None and nb["chassis_id"].lower() != cid.lower():
        sys.exit("%s: chassis id %r in sparkd, %r in lldpcli" % (port, nb["chassis_id"], cid))
PY
}

# topology_of NAME: NAME's map as `sparkc --json topology` prints it, without "self" and
# api_version, canonical JSON.
topology_of() {
        local json
        json=$(sparkc_of "$1" --json topology) || return 1
        json_get "$json" "json.dumps({k: v for k, v in d.items() if k not in ('self', 'api_version')}, sort_keys=True)"
}

# maps_agree SHAPE NODES LINKS NAME...: true when every named node's map has that shape, node and
# link count, every link ok, and all maps are the same.
maps_agree() {
        local shape=$1 nodes=$2 links=$3 first="" name map
        shift 3
        for name in "$@"; do
                map=$(topology_of "$name") || return 1
                [ "$(json_get "$map" "(d.get('shape'), len(d.get('nodes', [])), len(d.get('links', [])), all(l['state'] == 'ok' for l in d.get('links', [])))")" = "('$shape', $nodes, $links, True)" ] || return 1
                if [ -z "$first" ]; then first=$map; elif [ "$map" != "$first" ]; then return 1; fi
        done
}

# maps_report NAME...: each node's map, for a failure's message.
maps_report() {
        local name
        for name in "$@"; do echo "$name: $(topology_of "$name" 2>&1 | head -c 3000)"; done
}

# ports_heard NAME COUNT: true once NAME's daemon has a neighbour on COUNT ports.
ports_heard() {
        local json
        json=$(sparkd_call "$1" neighbours) || return 1
        [ "$(json_get "$json" "sum(1 for p in d['ports'] if p['neighbour'])")" = "$2" ]
}

# has_link NAME A_NODE:A_PORT B_NODE:B_PORT: true when NAME's map has that link (either way round).
has_link() {
        local map
        map=$(topology_of "$1") || return 1
        [ "$(json_get "$map" "any({(l['a'].get('name'), l['a'].get('netdev')), (l['b'].get('name'), l['b'].get('netdev'))} == {tuple('$2'.split(':')), tuple('$3'.split(':'))} for l in d.get('links', []))")" = True ]
}

# logged NAME EVENT: true once NAME's daemon logged EVENT.
logged() { grep -q " event=$2\( \|\$\)" "$(log_of "$1")"; }

# neighbour_is NAME NETDEV PYEXPR EXPECTED: true when neighbour_of prints EXPECTED (for wait_until).
neighbour_is() { [ "$(neighbour_of "$1" "$2" "$3")" = "$4" ]; }
