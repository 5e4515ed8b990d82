#!/usr/bin/env bash
# The access matrix with real users and groups made for the test (removed after): the socket's
# mode and group decide who may connect; every read method is open to those, every admin method
# (reload, topology-netplan-write, probe-collective, probe, probe-cancel) only to root and members
# of the admin group, primary or supplementary; a user the socket refuses is told the group it
# is for. On the peer port, a client without the cluster key (a wrong PSK, or no PSK at all)
# fails the TLS handshake; the daemon says so in a bounded number of lines and keeps serving.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
command -v useradd >/dev/null && command -v groupadd >/dev/null || skip "needs useradd and groupadd"
command -v openssl >/dev/null || skip "needs openssl"

# Names unique to this run; removed on exit, also when the test fails.
tag=$(printf '%x' $$)
sock_grp=spkS$tag admin_grp=spkA$tag
groupadd "$sock_grp" && CLEANUP_CMDS+=("groupdel $sock_grp")
groupadd "$admin_grp" && CLEANUP_CMDS+=("groupdel $admin_grp")
add_user() { # NAME GROUPS...: a user without a home whose supplementary groups are GROUPS
        local name=$1 groups
        shift
        groups=$(IFS=,; echo "$*")
        useradd -M -N -s /usr/sbin/nologin ${groups:+-G "$groups"} "$name"
        CLEANUP_CMDS+=("userdel $name")
}
add_user "spko$tag"                          # outsider: in no group of ours
add_user "spkr$tag" "$sock_grp"              # reader: may open the socket
add_user "spka$tag" "$sock_grp" "$admin_grp" # admin: socket and admin group
add_user "spkn$tag" "$admin_grp"             # admin group only: the socket is still closed
as() { local user=$1; shift; setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@"; }

read_methods="status version links peers metrics fabric env doctor history probe-kinds"
admin_methods="reload topology-netplan-write probe-collective probe probe-cancel"
# methods_as USER: "method:result" for every method, result "denied", "ok" or "error" (an answer
# that is not a refusal, such as missing params), or "noconnect".
methods_as() {
        as "$1" /usr/bin/python3 - "$(sock_of a)" $read_methods $admin_methods <<'PY'
import json, socket, sys
out = []
for m in sys.argv[2:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(sys.argv[1])
    except PermissionError:
        out.append(m + ":noconnect")
        continue
    s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": m}).encode() + b"\n")
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    r = json.loads(buf)
    if "result" in r:
        out.append(m + ":ok")
    else:
        out.append(m + (":denied" if r["error"]["code"] == -32001 else ":error"))
print(" ".join(out))
PY
}
# expect_row USER READ ADMIN: every read method gives READ, every admin method ADMIN.
expect_row() {
        local row m want
        row=$(methods_as "$1")
        echo "$1: $row"
        for m in $read_methods; do
                [[ " $row " == *" $m:$2 "* ]] || fail "$1: $m is not $2: $row"
        done
        for m in $admin_methods; do
                if [ "$3" = allowed ]; then
                        [[ " $row " == *" $m:denied "* || " $row " == *" $m:noconnect "* ]] && fail "$1: $m refused: $row"
                else
                        [[ " $row " == *" $m:$3 "* ]] || fail "$1: $m is not $3: $row"
                fi
        done
        return 0
}

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
peer_conf a fa 10.99.0.2 "[api]" "socket_mode = 0660" "socket_group = $sock_grp" "admin_group = $admin_grp"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"

step "socket mode and group"
assert_eq "$(stat -c '%a %G' "$(sock_of a)")" "660 $sock_grp" "socket mode and group"

step "methods by user and group"
expect_row root ok allowed
expect_row "spka$tag" ok allowed
expect_row "spkr$tag" ok denied
expect_row "spko$tag" noconnect noconnect
expect_row "spkn$tag" noconnect noconnect
for m in $admin_methods; do
        grep -q "refused $m for uid $(id -u "spkr$tag")" "$(log_of a)" || fail "refusal of $m not logged"
done

step "a user the socket refuses is told its configured group"
rc=0; err=$(as "spkn$tag" "$SPARKC" --socket "$(sock_of a)" status 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status of a user outside the socket's group"
assert_contains "$err" "the socket is for root and the group $sock_grp" "the refusal"

step "admin group as primary group, socket group supplementary"
usermod -g "$admin_grp" -G "$sock_grp" "spko$tag"
expect_row "spko$tag" ok allowed

step "peer port without the cluster key: handshake fails, bounded log, still serving"
lines0=$(wc -l <"$(log_of a)")
wrong=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
for i in $(seq 10); do
        rc=0
        ip netns exec "$b" timeout 10 openssl s_client -connect 10.99.0.1:7471 -tls1_3 -psk "$wrong" \
                -psk_identity sparkd-cluster-v1 -ciphersuites TLS_AES_128_GCM_SHA256 </dev/null \
                >"$TEST_TMP/s_client.out" 2>&1 || rc=$?
        [ "$rc" != 0 ] || fail "a wrong PSK completed a handshake: $(tail -5 "$TEST_TMP/s_client.out")"
        rc=0
        ip netns exec "$b" timeout 10 openssl s_client -connect 10.99.0.1:7471 -tls1_3 </dev/null \
                >"$TEST_TMP/s_client.out" 2>&1 || rc=$?
        [ "$rc" != 0 ] || fail "a client without a PSK completed a handshake: $(tail -5 "$TEST_TMP/s_client.out")"
done
sparkc_of a status >/dev/null || fail "not serving after failed handshakes"
lines=$(($(wc -l <"$(log_of a)") - lines0))
echo "20 failed handshakes: $lines log lines"
grep -q "event=peer-rejected" "$(log_of a)" || fail "failed handshakes not logged"
[ "$lines" -le 6 ] || fail "$lines log lines for 20 failed handshakes: not rate limited"
sparkd_stop a
pass
