#!/usr/bin/env bash
# The GID watch end to end. Node a's host root is a copy of a fixture Spark whose rail
# enp1s0f1np1 is a veth here; veth has no RDMA device, so the test rewrites rocep1s0f1's GID
# table in the host root as the kernel would (lib_gid.sh) alongside the real address and
# carrier changes. gid-changed must come exactly where the RoCE v2 GID of the netdev's address
# changed: not for a second address, not for a flap that leaves the table as it was; once for a
# flap that moves the address to GID 5, once for the address removed, once for a table change
# found only on reload (the backstop: 192.168.178.21 to GID 3). `sparkc status` says the
# environment changed until `sparkc env` is asked again; the metrics count the changes and mark
# the environment stale when one came after an environment was served.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_gid.sh"

gid_fixture_new
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" enp1s0f1np1 "$b" fb 192.168.177.11/24 192.168.177.12/24
# No backstop timer during the test (1h): only netlink changes and the reload re-read the tables.
printf '[daemon]\nhost_root = %s\nrecheck_interval = 1h\n[fabric]\ninterfaces = enp1s0f1np1\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/host" >"$TEST_TMP/a.conf"
gid_table start "$GID_MAC" "$(mapped 192.168.177.11)"

gid_index() { json_get "$(sparkc_of a --json status)" \
        '[p["gid_index"] for p in d["gid"]["ports"] if p["device"] == "rocep1s0f1"][0]'; }
changed_at() { json_get "$(sparkc_of a --json status)" 'd["gid"]["env_changed_at"]'; }
# metric_is NAME VALUE WHEN: `sparkc metrics` has the line "NAME VALUE".
metric_is() {
        local out
        out=$(sparkc_of a metrics)
        grep -qx "$1 $2" <<<"$out" || fail "metrics $3: expected '$1 $2', got '$(grep "^$1 " <<<"$out")'"
}
# reread_seen WHEN: the daemon re-read the table since gid_mark_unread, and the watcher has every
# gid-changed that re-read found.
reread_seen() {
        wait_until 5 gid_read_since_mark || fail "the GID table was not re-read $1"
        events_final a gid-changed
}

sparkd_start a "$a" -c "$TEST_TMP/a.conf"
watch_events a

step "at start: 192.168.177.11 at GID 3, nothing changed"
assert_eq "$(gid_index)" 3 "GID index at start"
assert_eq "$(changed_at)" None "env_changed_at at start"
out=$(sparkc_of a status)
case "$out" in *"env changed"*) fail "status says the env changed at start: $out" ;; esac

# Another subnet: removing a primary address removes the secondaries of its subnet with it.
step "a second address (its GIDs after the first): no gid-changed"
gid_table second "$GID_MAC" "$(mapped 192.168.177.11)" "$(mapped 192.168.178.21)"
gid_mark_unread
ip -n "$a" addr add 192.168.178.21/24 dev enp1s0f1np1
reread_seen "after a second address"
assert_eq "$(count_events a gid-changed)" 0 "gid-changed after a second address"
assert_eq "$(gid_index)" 3 "GID index after a second address"

step "a flap that leaves the table as it was: no gid-changed"
gid_flap "$b" true
wait_events a link-up enp1s0f1np1 1 5 || fail "no link-up after the flap"
events_final a gid-changed
assert_eq "$(count_events a gid-changed)" 0 "gid-changed after a flap with the same table"

step "a flap after which an IPv6 address comes first: 192.168.177.11 moves to GID 5"
gid_flap "$b" gid_table moved "$GID_MAC" 2001:0db8:0177:0000:0e42:a1ff:fe5b:0011 "$(mapped 192.168.177.11)" \
        "$(mapped 192.168.178.21)"
wait_events a gid-changed enp1s0f1np1 1 5 || fail "no gid-changed after the table moved"
events_final a gid-changed
assert_eq "$(count_events a gid-changed)" 1 "gid-changed after the table moved"
ev=$(grep '"gid-changed"' "$TEST_TMP/a.events" | tail -1)
assert_eq "$(json_get "$ev" 'd["fields"]["device"] + " " + d["fields"]["port"]')" "rocep1s0f1 1" "device and port"
assert_eq "$(json_get "$ev" 'd["fields"]["old_index"] + "->" + d["fields"]["new_index"]')" "3->5" "old and new index"
assert_eq "$(json_get "$ev" 'd["fields"]["old_address"] + " " + d["fields"]["new_address"]')" \
        "192.168.177.11 192.168.177.11" "addresses"
assert_eq "$(json_get "$ev" 'd["priority"]')" warning "priority"
assert_eq "$(gid_index)" 5 "GID index after the table moved"
[ "$(changed_at)" != None ] || fail "status has no env_changed_at after the change"
out=$(sparkc_of a status)
assert_contains "$out" "env changed" "sparkc status after the change"
assert_contains "$out" "192.168.177.11 moved from GID 3 to GID 5" "sparkc status reason"
# No environment was served before the change: no job can hold the old index.
metric_is sparkd_gid_changes_total 1 "after the change"
metric_is sparkd_env_stale 0 "after a change before any env was served"

step "sparkc env gives the new index and clears the mark"
out=$(sparkc_of a env)
assert_contains "$out" "rocep1s0f1:5" "env after the change"
assert_eq "$(changed_at)" None "env_changed_at after sparkc env"
out=$(sparkc_of a status)
case "$out" in *"env changed"*) fail "status still says the env changed: $out" ;; esac

step "the first address removed: the netdev's address is now 192.168.178.21 at GID 7"
gid_table removed "$GID_MAC" 2001:0db8:0177:0000:0e42:a1ff:fe5b:0011 - "$(mapped 192.168.178.21)"
gid_mark_unread
ip -n "$a" addr del 192.168.177.11/24 dev enp1s0f1np1
wait_events a gid-changed enp1s0f1np1 2 5 || fail "no gid-changed after the address was removed"
reread_seen "after the address was removed"
assert_eq "$(count_events a gid-changed)" 2 "gid-changed after the address was removed"
ev=$(grep '"gid-changed"' "$TEST_TMP/a.events" | tail -1)
assert_eq "$(json_get "$ev" 'd["fields"]["old_address"] + "/" + d["fields"]["old_index"] + " " + d["fields"]["new_address"] + "/" + d["fields"]["new_index"]')" \
        "192.168.177.11/5 192.168.178.21/7" "old and new address and index"
# The environment served before this change names GID 5: jobs started with it may fail.
metric_is sparkd_gid_changes_total 2 "after the address was removed"
metric_is sparkd_env_stale 1 "after a change under a served environment"

step "a table change without any netlink change: found on reload"
gid_table reordered "$GID_MAC" "$(mapped 192.168.178.21)"
# An absence shows no event: a re-read that must not come (no notification, backstop 1 h) would
# come within twice the watch's 0.5 s settle delay.
sleep 1
assert_eq "$(count_events a gid-changed)" 2 "gid-changed before the reload (no notification)"
sparkc_of a reload >/dev/null || fail "reload failed"
wait_events a gid-changed enp1s0f1np1 3 5 || fail "no gid-changed after the reload"
events_final a gid-changed
assert_eq "$(count_events a gid-changed)" 3 "gid-changed after the reload"
assert_eq "$(gid_index)" 3 "GID index after the reload"
sparkd_stop a
pass
