#!/usr/bin/env bash
# Two hosts joined by a cable, each with its own avahi-daemon and D-Bus, see each other's
# _sparkd._tcp record with its TXT within 5 s, and see it go when its publisher stops: what
# sparkd's discovery stands on, shown with avahi-publish and avahi-browse only. Every process of
# the harness is gone afterwards, also when a test fails half way (checked with a failing run).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_avahi.sh"
command -v avahi-publish >/dev/null || skip "needs avahi-publish (Debian: avahi-utils)"

ID_A=0123456789abcdef0123456789abcdef
ID_B=fedcba9876543210fedcba9876543210

# A failing run, used below: the hosts start, then the test fails; lib.sh's cleanup must stop them.
if [ -n "${MDNS_SMOKE_FAIL_AFTER_START:-}" ]; then
        a=$(netns_new a)
        avahi_host "$a" child-a
        echo "started: ${DAEMON_PIDS[*]}"
        echo "netns: $a"
        fail "failing on purpose"
fi

# browse_seen FILE KIND NAME [NEEDLE]: avahi-browse -p printed a line of KIND (= resolved,
# - removed) for service NAME (containing NEEDLE).
browse_seen() {
        grep "^$2;" "$1" | grep -F ";$3;_sparkd._tcp;" | grep -qF -- "${4:-}"
}

step "two hosts, one cable, an avahi-daemon and a D-Bus each"
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" mdnsa "$b" mdnsb 10.77.0.1/24 10.77.0.2/24
avahi_host "$a" spark-a
avahi_host "$b" spark-b
all_pids="${AVAHI_PIDS_OF[$a]} ${AVAHI_PIDS_OF[$b]}"
for pid in $all_pids; do
        kill -0 "$pid" 2>/dev/null || fail "harness process $pid died"
done

step "each browses, each publishes; both records with TXT seen within 5 s"
tools=()
for h in a b; do
        in_avahi_host_bg "${!h}" avahi-browse -rp _sparkd._tcp >"$TEST_TMP/browse-$h.out" 2>"$TEST_TMP/browse-$h.log"
        tools+=("$AVAHI_BG_PID")
done
in_avahi_host_bg "$a" avahi-publish -s spark-a _sparkd._tcp 7471 v=1 "id=$ID_A" name=spark-a addrs=10.77.0.1 \
        port=7471 >"$TEST_TMP/publish-a.log" 2>&1
pub_a=$AVAHI_BG_PID
in_avahi_host_bg "$b" avahi-publish -s spark-b _sparkd._tcp 7471 v=1 "id=$ID_B" name=spark-b addrs=10.77.0.2 \
        port=7471 >"$TEST_TMP/publish-b.log" 2>&1
tools+=("$AVAHI_BG_PID")
start=$(date +%s.%N)
wait_until 5 browse_seen "$TEST_TMP/browse-b.out" = spark-a "\"id=$ID_A\"" || fail "b did not see a's record in 5 s"
wait_until 5 browse_seen "$TEST_TMP/browse-a.out" = spark-b "\"id=$ID_B\"" || fail "a did not see b's record in 5 s"
echo "both seen after $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" \
        "$start" "$(date +%s.%N)") s"
line=$(grep '^=;' "$TEST_TMP/browse-b.out" | grep -F ';spark-a;_sparkd._tcp;' | head -n1)
echo "b sees: $line"
assert_contains "$line" ";mdnsb;IPv4;" "interface and protocol"
assert_contains "$line" ";10.77.0.1;7471;" "address and port"
for kv in v=1 name=spark-a addrs=10.77.0.1 port=7471; do
        assert_contains "$line" "\"$kv\"" "TXT"
done

step "a's publisher stops: b sees the record go"
kill -TERM "$pub_a"
wait "$pub_a" 2>/dev/null || true
wait_until 5 browse_seen "$TEST_TMP/browse-b.out" - spark-a || fail "b did not see a's record removed in 5 s"

step "hosts stopped: no process of theirs is left"
kill -TERM "${tools[@]}" 2>/dev/null || true
wait "${tools[@]}" 2>/dev/null || true
avahi_host_stop "$a"
avahi_host_stop "$b"
for pid in $all_pids; do
        [ ! -d "/proc/$pid" ] || fail "process $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) outlived its host"
done
for ns in "$a" "$b"; do
        left=$(ip netns pids "$ns" | xargs -r ps -o pid=,comm= -p || true)
        [ -z "$left" ] || fail "left in $ns: $left"
done

step "a test that fails half way: lib.sh's cleanup stops its avahi host all the same"
rc=0
out=$(MDNS_SMOKE_FAIL_AFTER_START=1 bash "$0" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of the failing run"
assert_contains "$out" "failing on purpose"
child_pids=$(sed -n 's/^started: //p' <<<"$out")
child_ns=$(sed -n 's/^netns: //p' <<<"$out")
if [ -z "$child_pids" ] || [ -z "$child_ns" ]; then
        fail "the failing run did not get as far as its host: $out"
fi
for pid in $child_pids; do
        [ ! -d "/proc/$pid" ] || fail "process $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) of the failing run is left"
done
! ip netns list | awk '{print $1}' | grep -qx "$child_ns" || fail "namespace $child_ns of the failing run is left"
echo "the failing run's processes ($child_pids) and namespace are gone"

pass
