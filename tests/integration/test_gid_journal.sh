#!/usr/bin/env bash
# gid-changed reaches a real systemd-journald with its MESSAGE_ID, priority warning and
# SPARKD_DEVICE, SPARKD_PORT, SPARKD_OLD_INDEX/SPARKD_NEW_INDEX and SPARKD_OLD_ADDRESS/
# SPARKD_NEW_ADDRESS, and journalctl finds it by them. A flap that leaves the GID table as it was
# logs nothing; one after which an IPv6 address comes first (192.168.177.11 from GID 3 to 5)
# logs exactly one entry.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_gid.sh"

journald=/lib/systemd/systemd-journald
[ -x "$journald" ] || skip "needs systemd-journald"
command -v journalctl >/dev/null || skip "needs journalctl"

gid_fixture_new
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" enp1s0f1np1 "$b" fb 192.168.177.11/24 192.168.177.12/24
printf '[daemon]\nhost_root = %s\nrecheck_interval = 1h\n[fabric]\ninterfaces = enp1s0f1np1\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/host" >"$TEST_TMP/a.conf"
mkdir -p "$TEST_TMP/journal"
gid_table start "$GID_MAC" "$(mapped 192.168.177.11)"
export GID_DEV GID_MAC SPARKC TEST_TMP TEST_NAME
export -f gid_table mapped gid_mark_unread gid_read_since_mark gid_carrier gid_flap wait_until link_is sparkc_of \
        sock_of json_get fail

# Each flap waits until the daemon has seen each carrier change and re-read the GID table after it
# (lib_gid.sh); journald writes what it gets in order, so once the daemon's last word at exit is in
# the journal, everything it logged before is.
unshare --mount --propagation private bash -euo pipefail -c '
        journald=$1 a=$2 b=$3 sparkd=$4 sparkc=$5 sock=$6 state=$7 journal=$8 conf=$9
        mount -t tmpfs tmpfs /run/systemd
        mkdir -p /run/systemd/journal /run/log/journal
        mount --bind "$journal" /run/log/journal
        "$journald" >"$journal/../journald.log" 2>&1 &
        jpid=$! dpid=
        # A failed step must not leave the daemons running (and the test hanging on them).
        trap '"'"'kill -TERM $dpid $jpid 2>/dev/null || true'"'"' EXIT
        journal_has() { journalctl -D "$journal" --no-pager -q "$@" | grep -q .; }
        wait_until 5 test -S /run/systemd/journal/socket || fail "journald did not start"
        ip netns exec "$a" "$sparkd" -f --log-target=journal -c "$conf" --socket "$sock" --state-dir "$state" &
        dpid=$!
        wait_until 10 "$sparkc" --socket "$sock" status || fail "sparkd did not start"
        gid_flap "$b" true
        gid_flap "$b" gid_table moved "$GID_MAC" 2001:0db8:0177:0000:0e42:a1ff:fe5b:0011 "$(mapped 192.168.177.11)"
        kill -TERM $dpid
        wait $dpid
        wait_until 5 journal_has SPARKD_EVENT=daemon-stopping || fail "daemon-stopping not in the journal"
        kill -TERM $jpid
        wait $jpid || true
' _ "$journald" "$a" "$b" "$SPARKD" "$SPARKC" "$(sock_of a)" "$TEST_TMP/a.state" "$TEST_TMP/journal" \
        "$TEST_TMP/a.conf" || fail "the journal run failed"

id=2742b663cdc3475b9254e1bfebc7a59e
entries() { journalctl -D "$TEST_TMP/journal" --no-pager -o json "$@"; }

step "exactly one gid-changed, for the flap that moved the GID"
assert_eq "$(entries MESSAGE_ID=$id | wc -l)" 1 "gid-changed entries"
# Both flaps were seen: the first logs link-down and link-up, the second's down makes it flapping.
assert_eq "$(entries SPARKD_EVENT=link-down SPARKD_IFACE=enp1s0f1np1 | wc -l)" 1 "link-down entries"
assert_eq "$(entries SPARKD_EVENT=link-flapping SPARKD_IFACE=enp1s0f1np1 | wc -l)" 1 "link-flapping entries"

step "its fields, found by them"
out=$(entries MESSAGE_ID=$id SPARKD_DEVICE=rocep1s0f1 SPARKD_PORT=1 SPARKD_IFACE=enp1s0f1np1)
[ -n "$out" ] || fail "no gid-changed entry by device, port and iface"
assert_eq "$(json_get "$out" 'd["SPARKD_OLD_INDEX"] + "->" + d["SPARKD_NEW_INDEX"]')" "3->5" "old and new index"
assert_eq "$(json_get "$out" 'd["SPARKD_OLD_ADDRESS"] + " " + d["SPARKD_NEW_ADDRESS"]')" \
        "192.168.177.11 192.168.177.11" "old and new address"
assert_eq "$(json_get "$out" 'd["PRIORITY"]')" 4 "priority (warning)"
assert_eq "$(json_get "$out" 'd["SPARKD_EVENT"]')" gid-changed "SPARKD_EVENT"
assert_contains "$(json_get "$out" 'd["MESSAGE"]')" "192.168.177.11 moved from GID 3 to GID 5" "MESSAGE"
[ -z "$(entries MESSAGE_ID=$id SPARKD_DEVICE=roceP2p1s0f1)" ] || fail "a gid-changed entry for the twin"
pass
