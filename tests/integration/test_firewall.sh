#!/usr/bin/env bash
# A host firewall that lets sparkd's port through but drops new TCP to the ephemeral ports NCCL's
# bootstrap and socket transport listen on: an nftables rule in b's namespace on its fabric veth
# fb drops new connections to 32768-60999 (the namespace's ip_local_port_range), sparkd's port
# 7471 accepted. Both doctors name the firewall, the node and the interface: a's as the peer
# that drops on fb, b's as this node. With the rule removed, the next check (the link bounced,
# so the peers come up again) clears the finding on both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
command -v nft >/dev/null || skip "nft (nftables) is not installed"

cable_nodes
read -r low high < <(ip netns exec "$b" cat /proc/sys/net/ipv4/ip_local_port_range)
# b_firewall VERDICT: b's table: sparkd's port in on fb, new TCP to the ephemeral range VERDICT.
b_firewall() {
        ip netns exec "$b" nft -f - <<NFT
table inet sparkd_test {
        chain input {
                type filter hook input priority 0; policy accept;
                iifname "fb" tcp dport 7471 accept
                iifname "fb" ct state new tcp dport $low-$high $1
        }
}
NFT
}
b_firewall drop || skip "nftables does not work in a namespace here"
start_cable_nodes

# recheck: a's cable down until both see the other down, then up again: the peers come up anew
# and each checks the other at once (the next check would otherwise come minutes later).
recheck() {
        ip -n "$a" link set fa down
        wait_pairs down 15 "a b" "b a"
        ip -n "$a" link set fa up
        wait_pairs up 15 "a b" "b a"
}

step "a's doctor names b's firewall on fb, with the fix"
# The check runs when the peer comes up; a dropped connect is known after its 3 s timeout.
wait_until 30 doctor_says a "[FAIL] firewall" || fail "a's doctor: $(doctor_text a)"
out=$(doctor_text a)
assert_contains "$out" "b drops new TCP to its ephemeral port" "a's doctor"
assert_contains "$out" "on fb (10.99.0.2), from fa (10.99.0.1); sparkd's port works on this path" "a's doctor"
assert_contains "$out" "fix: on b, let TCP in on the fabric interfaces" "a's doctor fix"
assert_contains "$out" "ufw allow in on fb" "a's doctor fix"
json=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$json" '[c for c in d["checks"] if c["id"] == "firewall"][0]["status"]')" fail "a's firewall check"

step "b's doctor names its own firewall on fb"
wait_until 30 doctor_says b "this node drops new TCP from a" || fail "b's doctor: $(doctor_text b)"
out=$(doctor_text b)
assert_contains "$out" "to ephemeral port" "b's doctor"
assert_contains "$out" "on fb (10.99.0.2)" "b's doctor"
assert_contains "$out" "on this node, let TCP in on the fabric interfaces" "b's doctor fix"
grep -q "firewall: b dropped new TCP to its ephemeral port" "$(log_of a)" || fail "no firewall line in a's log"

step "the other way (b to a) is open"
assert_contains "$(doctor_text b)" "from this node on fb: ephemeral port" "b's doctor"

step "rule removed: the next check clears the finding on both"
ip netns exec "$b" nft delete table inet sparkd_test
recheck
# Both directions checked anew: a's connect to b and b's to a, at each end.
wait_until 30 doctor_says a "ephemeral TCP ports open on 2 paths to peers" || fail "a's doctor: $(doctor_text a)"
wait_until 30 doctor_says b "ephemeral TCP ports open on 2 paths to peers" || fail "b's doctor: $(doctor_text b)"
assert_contains "$(doctor_text a)" "[ ok ] firewall" "a's doctor"
assert_not_contains "$(doctor_text b)" "drops new TCP" "b's doctor"

step "a rule that rejects (a TCP reset) reads as refused"
b_firewall "reject with tcp reset"
recheck
wait_until 30 doctor_says a "b refuses new TCP to its ephemeral port" || fail "a's doctor: $(doctor_text a)"
assert_contains "$(doctor_text a)" "on fb (10.99.0.2), from fa (10.99.0.1): Connection refused" "a's doctor"
sparkd_stop a
sparkd_stop b
pass
