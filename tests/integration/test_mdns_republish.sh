#!/usr/bin/env bash
# The mDNS record follows the fabric addresses without a timer: an address added to the fabric
# port after start is in the record's TXT (addrs) within 5 s, published again on the links'
# change notification; the peers' tick does not run for a node without peers.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_avahi.sh"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.76.0.1/24 10.76.0.2/24
avahi_host "$a" sparka
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
printf '[fabric]\ninterfaces = fa\n[peers]\nmdns = yes\nkey_file = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/cluster.key" >"$TEST_TMP/a.conf"
sparkd_start_avahi a "$a" -c "$TEST_TMP/a.conf"

# record_has NEEDLE: the node's own record, as its avahi-daemon resolves it (avahi-browse -p
# quotes each TXT item), contains NEEDLE.
record_has() {
        in_avahi_host "$a" avahi-browse -rpt _sparkd._tcp 2>/dev/null | grep '^=' | grep -qF -- "$1"
}

step "published with the address it started with"
wait_until 10 record_has '"addrs=10.76.0.1"' || fail "no record with addrs=10.76.0.1"

step "an address added later is published within 5 s"
ip -n "$a" addr add 10.76.1.1/24 dev fa
# The TXT item itself: the resolved line's address field may be any of the host's addresses.
wait_until 5 record_has '"addrs=10.76.0.1,10.76.1.1"' || fail "the record lacks 10.76.1.1: $(in_avahi_host "$a" avahi-browse -rpt _sparkd._tcp)"
sparkd_stop a
pass
