# The cluster harness: N nodes cabled by a plan, each as a real DGX Spark shows itself, for every
# multi-node test. Sourced after lib.sh, lib_peers.sh and lib_lldp.sh.
#
# A node is a network namespace with its four fabric netdevs under their real names, a host root
# of its own (cluster_host.py: a sysfs tree whose PCI functions, RDMA devices, MACs, carriers and
# GID tables match what the namespace has, with spark-twins' host facts), its own lldpd and its
# own sparkd reading both.
# - A Spark (kind spark) has two QSFP ports, each two PCIe halves ("twins") with a netdev and an
#   RDMA device each: port F is enp1s0fFnpF (0000:01:00.F, rocep1s0fF) and its twin
#   enP2p1s0fFnpF (0002:01:00.F, roceP2p1s0fF).
# - A two-NIC host (kind nic2) has two dual-port NICs and no twins: enpBs0fFnpF on 0000:0B:00.F
#   (mlx5_N); its port N (0 to 3) is NIC N/2 + 1, function N%2.
# Cables, and why so: a QSFP cable carries both twins of a port, and each twin talks to the twin
#   of the same half at the far end. A cable between two Sparks is therefore two veth pairs, twin
#   to twin: enp1s0fXnpX <-> enp1s0fYnpY and enP2p1s0fXnpX <-> enP2p1s0fYnpY. Cable K (counted
#   from 1 in the order laid) gives the first twins 10.10.K.1/24 and 10.10.K.2/24 and the second
#   twins 10.11.K.x/24: one subnet per cable and twin, as sparkd's own plan has it (twins on one
#   subnet fail the doctor). A cable between two-NIC hosts is one veth pair on 10.10.K.0/24.
# A switch is a bridge in a namespace of its own: both twins of a node's port go to one switch
#   port, made of one bridge port per twin that lldpd advertises as one (port id swpN, the same
#   on both, as the switch sees one QSFP cable), at 200G (the 802.3 MAC/PHY TLV; a veth says
#   10G). The Nth node plugged (from 1) gets 10.20.S.N/24 on its first twin and 10.21.S.N/24 on
#   the second, S the switch's number. A silent switch runs no lldpd, and the Linux bridge does
#   not forward LLDP (01:80:c2:00:00:0e): nodes behind it hear nothing.
# A port with no cable is a veth whose far end sits, down, in a namespace of loose ends: the
#   netdev is there, up, without carrier, as an unplugged Spark port is.
# Every node peers (static) with the nodes its cables reach: the far ends' first twin addresses
#   on a cable, every other node of the switch on one.

command -v python3 >/dev/null || skip "needs python3"

declare -a CL_NODES=()
declare -A CL_NS=() CL_KIND=() CL_SEQ=() CL_STATIC=() CL_SW_NS=() CL_SW_SEQ=() CL_SW_MEMBERS=()
declare -A CL_SW_ADDR=() CL_SW_SILENT=() CL_SW_PORTS=() CL_EXTRA=() CL_MAU=() CL_NO_LLDPD=()
declare -a CL_SWITCHES=() CL_CABLES=()
CL_CABLE_COUNT=0
CL_LOOSE_NS=""
CL_LOOSE_COUNT=0
CL_MEMLOCK_LIMITED=0
# 802.3 MAU types (IANA-MAU-MIB) for lldpd's MAC/PHY TLV.
CL_MAU_200G=131 # 200GBASE-CR4
CL_MAU_100G=98  # 100GBASE-CR4

# cluster_wait TIMEOUT_SEC CMD...: polls CMD until it succeeds, bounded by the clock (each poll
# of a map or a doctor runs sparkc and python, slow on a loaded machine).
cluster_wait() {
        local end=$(($(date +%s%N) + $1 * 1000000000))
        shift
        until "$@" >/dev/null 2>&1; do
                [ "$(date +%s%N)" -lt "$end" ] || return 1
                sleep 0.2
        done
}

# cluster_netdevs NODE PORT: the netdevs of a node's port, first twin first.
cluster_netdevs() {
        local p=$2
        case ${CL_KIND[$1]} in
        spark) echo "enp1s0f${p}np${p} enP2p1s0f${p}np${p}" ;;
        nic2) echo "enp$((p / 2 + 1))s0f$((p % 2))np$((p % 2))" ;;
        esac
}

# cluster_ports NODE: the node's port numbers.
cluster_ports() { case ${CL_KIND[$1]} in spark) echo "0 1" ;; nic2) echo "0 1 2 3" ;; esac; }

# cluster_node NAME [KIND]: a node (kind spark, or nic2) with nothing cabled yet.
cluster_node() {
        local name=$1 kind=${2:-spark}
        [ "$kind" = spark ] || [ "$kind" = nic2 ] || fail "cluster_node $name: kind $kind, expected spark or nic2"
        CL_NS[$name]=$(netns_new "$name")
        CL_KIND[$name]=$kind
        CL_SEQ[$name]=$((${#CL_NODES[@]} + 1))
        CL_NODES+=("$name")
        CL_STATIC[$name]=""
}

# cluster_mac NODE NETDEV: the netdev's MAC, locally administered, unique in the test.
cluster_mac() {
        local n=$2 idx=0 d
        # The netdev's place among its node's: port and twin.
        for d in enp1s0f0np0 enP2p1s0f0np0 enp1s0f1np1 enP2p1s0f1np1 enp2s0f0np0 enp2s0f1np1; do
                [ "$d" = "$n" ] && break
                idx=$((idx + 1))
        done
        printf '02:5a:%02x:%02x:00:01' "${CL_SEQ[$1]}" "$idx"
}

# cl_veth NS_A IF_A MAC_A NS_B IF_B MAC_B: a veth pair at MTU 9000, both ends up (MAC "" random).
cl_veth() {
        ip link add "$2" ${3:+address "$3"} mtu 9000 netns "$1" type veth peer name "$5" ${6:+address "$6"} \
                mtu 9000 netns "$4"
        ip -n "$1" link set "$2" up
        ip -n "$4" link set "$5" up
}

# cluster_cable A PORT_A B PORT_B: a cable between two nodes' ports (see the header).
cluster_cable() {
        local a=$1 pa=$2 b=$3 pb=$4 k t=0 da db
        local -a ta tb
        read -r -a ta <<<"$(cluster_netdevs "$a" "$pa")"
        read -r -a tb <<<"$(cluster_netdevs "$b" "$pb")"
        CL_CABLE_COUNT=$((CL_CABLE_COUNT + 1))
        k=$CL_CABLE_COUNT
        for ((t = 0; t < ${#ta[@]}; t++)); do
                da=${ta[t]}
                db=${tb[t]}
                cl_veth "${CL_NS[$a]}" "$da" "$(cluster_mac "$a" "$da")" "${CL_NS[$b]}" "$db" "$(cluster_mac "$b" "$db")"
                ip -n "${CL_NS[$a]}" addr add "10.$((10 + t)).$k.1/24" dev "$da"
                ip -n "${CL_NS[$b]}" addr add "10.$((10 + t)).$k.2/24" dev "$db"
        done
        CL_STATIC[$a]+=" 10.10.$k.2"
        CL_STATIC[$b]+=" 10.10.$k.1"
        CL_CABLES+=("$a:$pa $b:$pb")
}

# cluster_switch NAME [silent]: a switch; silent: no lldpd on it, and LLDP not forwarded.
cluster_switch() {
        local name=$1
        CL_SW_NS[$name]=$(netns_new "$name")
        CL_SWITCHES+=("$name")
        CL_SW_SEQ[$name]=${#CL_SWITCHES[@]}
        CL_SW_SILENT[$name]=$([ "${2:-}" = silent ] && echo 1 || echo 0)
        CL_SW_MEMBERS[$name]=""
        CL_SW_PORTS[$name]=0
        ip -n "${CL_SW_NS[$name]}" link add br0 type bridge
        ip -n "${CL_SW_NS[$name]}" link set br0 up
}

# cluster_plug NODE PORT SWITCH [MAU]: the node's port to the next switch port, which advertises
# MAU (an 802.3 MAU type; 200G by default).
cluster_plug() {
        local node=$1 port=$2 sw=$3 mau=${4:-$CL_MAU_200G} s n t=0 d swp
        local -a tw
        read -r -a tw <<<"$(cluster_netdevs "$node" "$port")"
        s=${CL_SW_SEQ[$sw]}
        CL_SW_PORTS[$sw]=$((CL_SW_PORTS[$sw] + 1))
        n=${CL_SW_PORTS[$sw]}
        for ((t = 0; t < ${#tw[@]}; t++)); do
                d=${tw[t]}
                swp="swp${n}t$t"
                cl_veth "${CL_NS[$node]}" "$d" "$(cluster_mac "$node" "$d")" "${CL_SW_NS[$sw]}" "$swp" ""
                ip -n "${CL_SW_NS[$sw]}" link set "$swp" master br0
                ip -n "${CL_NS[$node]}" addr add "10.$((20 + t)).$s.$n/24" dev "$d"
                CL_MAU[$sw:$swp]="$n $mau"
        done
        CL_SW_MEMBERS[$sw]+=" $node"
        CL_SW_ADDR[$node]=10.20.$s.$n
        CL_CABLES+=("$node:$port $sw:swp$n")
}

# cluster_ring N PREFIX: nodes PREFIX1..PREFIXN in a ring, node i's port 0 to node i+1's port 1.
cluster_ring() {
        local n=$1 prefix=$2 i
        for ((i = 1; i <= n; i++)); do cluster_node "$prefix$i"; done
        for ((i = 1; i <= n; i++)); do cluster_cable "$prefix$i" 0 "$prefix$((i % n + 1))" 1; done
}

# cluster_loose NODE: every netdev of the node without a cable gets one whose far end is loose.
cluster_loose() {
        local node=$1 p d
        [ -n "$CL_LOOSE_NS" ] || CL_LOOSE_NS=$(netns_new loose)
        for p in $(cluster_ports "$node"); do
                for d in $(cluster_netdevs "$node" "$p"); do
                        ip -n "${CL_NS[$node]}" link show "$d" >/dev/null 2>&1 && continue
                        CL_LOOSE_COUNT=$((CL_LOOSE_COUNT + 1))
                        cl_veth "${CL_NS[$node]}" "$d" "$(cluster_mac "$node" "$d")" "$CL_LOOSE_NS" "loose$CL_LOOSE_COUNT" ""
                        ip -n "$CL_LOOSE_NS" link set "loose$CL_LOOSE_COUNT" down
                done
        done
}

# cluster_switch_start SWITCH: once its lldpd (unless silent) answers, each switch port
# advertising one id for both twins' bridge ports, and its MAU.
cluster_switch_start() {
        local sw=$1 key swp n mau sock
        [ "${CL_SW_SILENT[$sw]}" = 1 ] && return 0
        cl_lldpd_ready "$sw"
        sock=$(lldp_sock_of "$sw")
        for key in "${!CL_MAU[@]}"; do
                [ "${key%%:*}" = "$sw" ] || continue
                swp=${key#*:}
                read -r n mau <<<"${CL_MAU[$key]}"
                lldpcli -u "$sock" configure ports "$swp" lldp portidsubtype local "swp$n" description "swp$n" >/dev/null ||
                        fail "lldpd of $sw refused port id swp$n on $swp"
                # MAC/PHY configuration/status: autonegotiation supported and on (03), advertised
                # capabilities (6c01), the operational MAU type.
                lldpcli -u "$sock" configure ports "$swp" lldp custom-tlv oui 00,12,0f subtype 1 \
                        oui-info "03,6c,01,$(printf '%02x,%02x' $((mau >> 8)) $((mau & 255)))" >/dev/null ||
                        fail "lldpd of $sw refused the MAC/PHY TLV on $swp"
        done
}

# cl_lldpd_launch NAME NS IFACES: lldpd_start's lldpd, not waited for (cl_lldpd_ready).
cl_lldpd_launch() {
        local sock
        sock=$(lldp_sock_of "$1")
        ip netns exec "$2" unshare --uts sh -c "hostname $1; exec lldpd -d -u $sock -I '$3'" \
                >>"$TEST_TMP/lldpd-$1.log" 2>&1 &
        DAEMON_PIDS+=("$!")
        DAEMON_PID_OF[lldpd-$1]=$!
}

# cl_lldpd_ready NAME: waits for a launched lldpd and has it send every second.
cl_lldpd_ready() {
        local sock
        sock=$(lldp_sock_of "$1")
        wait_until 20 lldpcli -u "$sock" show configuration || fail "lldpd of $1 did not start"
        lldpcli -u "$sock" configure lldp tx-interval 1 >/dev/null || fail "lldpd of $1: tx-interval 1 refused"
}

# cl_sparkd_launch NAME NS CONF: sparkd_start's daemon, not waited for (cl_sparkd_ready).
# CL_UTS=1: each sparkd in a UTS namespace of its own too, named as its node, so NCCL in its probe
# helpers tells the nodes apart as hosts (one GPU shared by four "hosts").
cl_sparkd_launch() {
        local -a uts=()
        [ -z "${CL_UTS:-}" ] || uts=(unshare --uts env "CL_UTS_NAME=$1" sh -c 'hostname "$CL_UTS_NAME" && exec "$@"' sh)
        DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TEST_TMP/no-bus \
                ip netns exec "$2" "${uts[@]}" "$SPARKD" --foreground --log-target=stderr --socket "$(sock_of "$1")" \
                --state-dir "$TEST_TMP/$1.state" -c "$3" >>"$(log_of "$1")" 2>&1 &
        DAEMON_PIDS+=("$!")
        DAEMON_PID_OF[$1]=$!
}

cl_sparkd_ready() {
        cluster_wait "${SPARKD_START_TIMEOUT:-30}" sparkc_of "$1" status && return 0
        kill -0 "$(pid_of "$1")" 2>/dev/null || fail "sparkd $1 exited during start-up"
        fail "sparkd $1 did not answer on $(sock_of "$1") within ${SPARKD_START_TIMEOUT:-30} s"
}

# cluster_start [EXTRA...]: loose ends, host roots, then lldpd and sparkd on every switch and
# node; EXTRA config lines go to every node (CL_EXTRA[NODE] to one, after them). A node with
# CL_NO_LLDPD[NODE]=1 gets no lldpd (its sparkd still looks for one at lldp_sock_of NODE). Each kind of
# daemon is launched on every node before any is waited for: on a loaded machine a start-up is
# mostly waiting.
cluster_start() {
        local node sw m static
        local -a extra
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        # As the packaged unit has it (LimitMEMLOCK=infinity), where the test may lift its limit;
        # elsewhere cluster_doctor_clean lets the doctor's memlock warning pass.
        ulimit -l unlimited 2>/dev/null || CL_MEMLOCK_LIMITED=1
        for node in "${CL_NODES[@]}"; do cluster_loose "$node"; done
        for sw in "${CL_SWITCHES[@]}"; do
                for node in ${CL_SW_MEMBERS[$sw]}; do
                        for m in ${CL_SW_MEMBERS[$sw]}; do
                                [ "$m" = "$node" ] || CL_STATIC[$node]+=" ${CL_SW_ADDR[$m]}"
                        done
                done
                [ "${CL_SW_SILENT[$sw]}" = 1 ] || cl_lldpd_launch "$sw" "${CL_SW_NS[$sw]}" 'swp*'
        done
        for node in "${CL_NODES[@]}"; do
                NODE_NS[$node]=${CL_NS[$node]}
                [ -n "${CL_NO_LLDPD[$node]:-}" ] || cl_lldpd_launch "$node" "${CL_NS[$node]}" "en*"
                python3 "$TESTS_DIR/cluster_host.py" "$TESTS_DIR/../fixtures/hosts/spark-twins" \
                        "$TEST_TMP/$node.host" "${CL_KIND[$node]}" "${CL_NS[$node]}" ||
                        fail "no host root for $node"
                fixture_nccl_as_sparkd "$TEST_TMP/$node.host"
                static=${CL_STATIC[$node]# }
                extra=("[daemon]" "host_root = $TEST_TMP/$node.host" "[fabric]" "lldpd_socket = $(lldp_sock_of "$node")" "$@")
                [ -z "${CL_EXTRA[$node]:-}" ] || mapfile -t -O ${#extra[@]} extra <<<"${CL_EXTRA[$node]}"
                peer_conf "$node" "en*" "$static" "${extra[@]}"
        done
        for sw in "${CL_SWITCHES[@]}"; do cluster_switch_start "$sw"; done
        for node in "${CL_NODES[@]}"; do [ -n "${CL_NO_LLDPD[$node]:-}" ] || cl_lldpd_ready "$node"; done
        for node in "${CL_NODES[@]}"; do cl_sparkd_launch "$node" "${CL_NS[$node]}" "$TEST_TMP/$node.conf"; done
        for node in "${CL_NODES[@]}"; do cl_sparkd_ready "$node"; done
}

# cluster_expected_links NAME...: the cables laid among these nodes (and their switches), one
# per line as "NODE:PORT NODE:PORT" or "NODE:PORT SWITCH:swpN", each end sorted.
cluster_expected_links() {
        local c a b want
        want=" $* "
        for c in "${CL_CABLES[@]}"; do
                read -r a b <<<"$c"
                [[ "$want" == *" ${a%%:*} "* ]] || continue
                if [[ "$a" < "$b" ]]; then echo "$a $b"; else echo "$b $a"; fi
        done | sort
}

# cluster_map_links NODE: the links of NODE's map in cluster_expected_links' form, the port
# numbered as the harness cabled it (a Spark's port from its first twin's name).
cluster_map_links() {
        local map
        map=$(topology_of "$1") || return 1
        python3 - "$map" <<'PY'
import json, re, sys
d = json.loads(sys.argv[1])

def port(netdev):
    m = re.fullmatch(r"en(?:p1|P2p1)s0f([01])np\1", netdev)
    if m:
        return m.group(1)
    m = re.fullmatch(r"enp([12])s0f([01])np\2", netdev)
    return str(2 * (int(m.group(1)) - 1) + int(m.group(2))) if m else "?" + netdev

out = []
for l in d.get("links", []):
    a = "%s:%s" % (l["a"]["name"], port(l["a"]["netdev"]))
    b = "%s:%s" % (l["b"]["name"], port(l["b"]["netdev"])) if "name" in l["b"] else "%s:%s" % (l["b"].get("switch"), l["b"].get("port"))
    out.append(" ".join(sorted([a, b])))
print("\n".join(sorted(out)))
PY
}

# cluster_map_is NODE SHAPE NAME...: NODE's map has SHAPE, the named nodes, exactly the cables
# laid among them, every link ok and no finding.
cluster_map_is() {
        local node=$1 shape=$2 map
        shift 2
        map=$(topology_of "$node") || return 1
        [ "$(json_get "$map" "(d.get('shape'), sorted(n['name'] for n in d.get('nodes', [])), all(l['state'] == 'ok' for l in d.get('links', [])), d.get('findings'))")" = \
                "('$shape', $(python3 -c 'import sys; print(sorted(sys.argv[1:]))' "$@"), True, [])" ] || return 1
        [ "$(cluster_map_links "$node")" = "$(cluster_expected_links "$@")" ]
}

# cluster_wait_map SHAPE TIMEOUT NAME...: every named node's map is SHAPE with exactly the cables
# laid, the same on all; fails naming the first that is not, with its map.
cluster_wait_map() {
        local shape=$1 timeout=$2 name first=""
        shift 2
        for name in "$@"; do
                cluster_wait "$timeout" cluster_map_is "$name" "$shape" "$@" || {
                        echo "expected links:"
                        cluster_expected_links "$@"
                        echo "$name's links:"
                        cluster_map_links "$name" || true
                        maps_report "$name"
                        fail "$name's map is not the $shape laid"
                }
        done
        # Equal maps: each node derives the same from the same tables.
        same_map() {
                local n m
                m=$(topology_of "$1") || return 1
                for n in "${@:2}"; do [ "$(topology_of "$n")" = "$m" ] || return 1; done
        }
        cluster_wait 10 same_map "$@" || { maps_report "$@"; fail "the maps of $* differ"; }
}

# cluster_doctor_clean NODE: NODE's doctor has no failed or warning check (but memlock's where the
# test could not lift its own limit: see cluster_start); prints them otherwise.
cluster_doctor_clean() {
        local out
        out=$(sparkc_of "$1" --json doctor 2>/dev/null) || true
        [ -n "$out" ] || return 1
        json_get "$out" "'\n'.join('%s %s: %s' % (c['id'], c['status'], c['summary']) for c in d['checks'] if c['status'] not in ('ok', 'skip') and not (c['id'] == 'memlock' and $CL_MEMLOCK_LIMITED))" |
                { ! grep .; }
}

# cluster_doctor_failures NODE: NODE's failed doctor checks, one line each; false when the doctor
# does not answer.
cluster_doctor_failures() {
        local out
        out=$(sparkc_of "$1" --json doctor 2>/dev/null) || true
        [ -n "$out" ] || return 1
        json_get "$out" "'\n'.join('%s: %s' % (c['id'], c['summary']) for c in d['checks'] if c['status'] == 'fail')"
}

# cluster_doctor_passes NODE: NODE's doctor answers and no check fails.
cluster_doctor_passes() {
        local out
        out=$(cluster_doctor_failures "$1") || return 1
        [ -z "$out" ]
}

# cluster_peers_up NODE COUNT: NODE has COUNT peers up.
cluster_peers_up() {
        local json
        json=$(sparkc_of "$1" --json peers 2>/dev/null) || return 1
        [ "$(json_get "$json" "sum(1 for p in d['peers'] if p['state'] == 'up')")" = "$2" ]
}

# cluster_findings NODE: the ids and statuses of NODE's map's findings, as "id:status" lines.
cluster_findings() {
        local map
        map=$(topology_of "$1") || return 1
        json_get "$map" "'\n'.join(sorted('%s:%s' % (f['id'], f['status']) for f in d.get('findings', [])))"
}

# cluster_management_lan NODE...: a LAN beside the fabric, as a Spark's 10GbE or Wi-Fi is: a
# bridge in a namespace of its own, each node's eth0 on it at 192.168.1.N/24 (N its place in the
# list) with the default route through 192.168.1.254, the bridge's own address. The job plan
# takes the default route's address as a node's management address.
cluster_management_lan() {
        local lan n i=0
        lan=$(netns_new lan)
        ip -n "$lan" link add br0 type bridge
        ip -n "$lan" addr add 192.168.1.254/24 dev br0
        ip -n "$lan" link set br0 up
        for n in "$@"; do
                i=$((i + 1))
                ip link add eth0 netns "${CL_NS[$n]}" type veth peer name "lan$i" netns "$lan"
                ip -n "$lan" link set "lan$i" master br0 up
                ip -n "${CL_NS[$n]}" addr add "192.168.1.$i/24" dev eth0
                ip -n "${CL_NS[$n]}" link set eth0 up
                ip -n "${CL_NS[$n]}" route add default via 192.168.1.254
        done
}

# cluster_plan_of NODE PYEXPR: PYEXPR over NODE's job plan `d` (sparkc --json plan).
cluster_plan_of() { json_get "$(sparkc_of "$1" --json plan 2>/dev/null)" "$2"; }

# cluster_plans_agree SIZE NODE...: every NODE's plan has SIZE members and one digest shared by all.
cluster_plans_agree() {
        local size=$1 first="" d n
        shift
        for n in "$@"; do
                d=$(cluster_plan_of "$n" 'str(d["size"]) + " " + d["digest"]') || return 1
                [ "${d% *}" = "$size" ] || return 1
                [ -n "$first" ] || first=$d
                [ "$d" = "$first" ] || return 1
        done
}

# cluster_check_ranks HEAD ADDR SIZE NODE...: on every NODE's env --for torchrun, one rendezvous
# at ADDR, NNODES=SIZE, ranks 0..SIZE-1 once each, HEAD rank 0.
cluster_check_ranks() {
        local head=$1 addr=$2 size=$3 n out ranks="" endpoint rank nnodes
        shift 3
        for n in "$@"; do
                out=$(sparkc_of "$n" env --for torchrun 2>/dev/null) || fail "env --for torchrun on $n"
                out=$(eval "$out"; echo "$MASTER_ADDR:$MASTER_PORT $NODE_RANK $NNODES")
                echo "$n: $out"
                read -r endpoint rank nnodes <<<"$out"
                assert_eq "$endpoint" "$addr:29500" "$n's rendezvous"
                assert_eq "$nnodes" "$size" "$n's NNODES"
                [ "$n" != "$head" ] || assert_eq "$rank" 0 "the head's rank"
                ranks="$ranks$rank "
        done
        assert_eq "$(tr ' ' '\n' <<<"$ranks" | grep . | sort -n | tr '\n' ' ')" "$(seq -s ' ' 0 $((size - 1))) " "ranks"
}

# cluster_ring_planned N: a ring of N Sparks (spark1..sparkN) beside a management LAN, started,
# every node's plan agreed on N members and every map the ring laid.
cluster_ring_planned() {
        local n=$1 i nodes=""
        cluster_ring "$n" spark
        for ((i = 1; i <= n; i++)); do nodes="$nodes spark$i"; done
        # shellcheck disable=SC2086
        cluster_management_lan $nodes
        cluster_start
        # shellcheck disable=SC2086
        cluster_wait 60 cluster_plans_agree "$n" $nodes || {
                for i in $nodes; do sparkc_of "$i" plan; done
                fail "no plan of $n"
        }
        # shellcheck disable=SC2086
        cluster_wait_map ring 60 $nodes
}

# cluster_job_shapes SHAPES: the shapes a job is tried on, those SHAPES names ("ring", "switch"):
# a ring of four, r1 to r4, beside a management LAN (a ring's plan rendezvous there), and four
# Sparks, s1 to s4, on the switch sw; their names go to the caller's arrays ring and switch.
cluster_job_shapes() {
        local i
        if [[ " $1 " == *" ring "* ]]; then
                cluster_ring 4 r
                ring=(r1 r2 r3 r4)
                cluster_management_lan "${ring[@]}"
        fi
        if [[ " $1 " == *" switch "* ]]; then
                cluster_switch sw
                for i in 1 2 3 4; do
                        cluster_node "s$i"
                        cluster_plug "s$i" 0 sw
                        switch+=("s$i")
                done
        fi
}
