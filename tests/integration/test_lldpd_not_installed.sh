#!/usr/bin/env bash
# sparkd without lldpd installed: the daemon links no liblldpctl (it loads it where lldpd is
# installed), so it starts where the library is missing. Each daemon runs in a mount namespace
# of its own whose library directory hides liblldpctl.so.4 (an overlay with the file removed),
# as on a host without the lldpd package. The neighbours say lldpd is absent and not installed,
# and come from the peer channel; the doctor says to install lldpd.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

command -v objdump >/dev/null || skip "needs objdump (Debian: binutils)"
is_sanitizer_build && skip "sparkd is a sanitizer build (its runtime is loaded from the library directory hidden here)"
lib=$(ldconfig -p | awk '$1 == "liblldpctl.so.4" && !found { print $NF; found = 1 }')
[ -n "$lib" ] || skip "needs liblldpctl.so.4 installed to hide it (Debian: lldpd)"
libdir=$(dirname "$(readlink -f "$lib")")

step "sparkd needs no liblldpctl to start"
needed=$(objdump -p "$SPARKD_BIN" | awk '$1 == "NEEDED" { print $2 }')
assert_not_contains "$needed" "lldpctl" "sparkd's NEEDED libraries"

# The daemons run in a mount namespace where $libdir has no liblldpctl.so.4*.
mkdir -p "$TEST_TMP/upper" "$TEST_TMP/work"
cat >"$TEST_TMP/sparkd-no-lldpctl" <<WRAP
#!/bin/sh
exec unshare --mount --propagation private sh -c '
        mount -t overlay overlay -o lowerdir=$libdir,upperdir=$TEST_TMP/upper,workdir=$TEST_TMP/work $libdir &&
        rm -f $libdir/liblldpctl.so.4* &&
        exec "\$0" "\$@"' "$SPARKD" "\$@"
WRAP
chmod +x "$TEST_TMP/sparkd-no-lldpctl"
SPARKD=$TEST_TMP/sparkd-no-lldpctl

step "two nodes on one cable, liblldpctl hidden from both"
cable_nodes
for n in a b; do
        printf '[fabric]\nlldpd_socket = %s\n' "$(lldp_sock_of $n)" >>"$TEST_TMP/$n.conf"
done
start_cable_nodes
[ -e "$lib" ] || fail "the host's $lib went away"

step "neighbours: lldpd absent and not installed, the peer channel instead"
json=$(sparkd_call a neighbours)
assert_eq "$(json_get "$json" "d['lldpd']")" absent "a's neighbours' lldpd"
assert_contains "$(json_get "$json" "d['lldpd_detail']")" "lldpd is not installed: liblldpctl.so.4" "a's lldpd_detail"
out=$(sparkc_of a neighbours)
assert_contains "$out" "lldpd absent: neighbours from the peer channel only" "sparkc neighbours"
assert_contains "$out" "lldpd is not installed: liblldpctl.so.4" "sparkc neighbours"
wait_until 10 neighbour_is a fa "(nb['source'], nb['sysname'], nb['port_id'])" "('peer', 'b', 'fb')" ||
        fail "a's neighbour on fa is not b's fb from the peer channel: $(sparkd_call a neighbours)"
grep -q "lldpd at $(lldp_sock_of a): lldpd is not installed: liblldpctl.so.4" "$(log_of a)" ||
        fail "a's log does not say lldpd is not installed: $(grep lldpd "$(log_of a)")"

step "the doctor says to install lldpd"
out=$(sparkc_of a --json doctor || true)
check=$(json_get "$out" "json.dumps([c for c in d['checks'] if c['id'] == 'lldpd'][0])")
assert_eq "$(json_get "$check" "d['status']")" warn "lldpd check status"
assert_contains "$(json_get "$check" "d['summary']")" "lldpd is not installed" "the lldpd check's summary"
assert_contains "$(json_get "$check" "d['evidence'][0]")" "liblldpctl.so.4" "the lldpd check's evidence"
assert_eq "$(json_get "$check" "d['fix']")" "apt install lldpd && systemctl enable --now lldpd" "the lldpd check's fix"

pass
