#!/usr/bin/env bash
# The state directory keeps the node's key, and so its id, across restarts; damaged state is moved
# aside with a warning; an unusable state directory is logged and the daemon serves anyway.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)
state=$TEST_TMP/a.state

step "the node id survives a restart"
sparkd_start a "$ns"
id1=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
[ -f "$state/node-id" ] || fail "node-id not saved"
assert_eq "$(stat -c %a "$state/node-key")" 600 "node-key's mode"
sparkd_stop a
sparkd_start a "$ns"
id2=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
assert_eq "$id2" "$id1" "node id after restart"
sparkd_stop a

step "a damaged node-id file is moved aside; the id is still the key's"
head -c 100 /dev/urandom >"$state/node-id"
sparkd_start a "$ns"
id3=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
assert_eq "$id3" "$id1" "node id with node-id damaged"
[ -f "$state/node-id.corrupt" ] || fail "damaged file not kept as node-id.corrupt"
assert_eq "$(tr -d '\n' <"$state/node-id")" "$id1" "node-id written again"
grep -q "event=state-quarantined" "$(log_of a)" || fail "quarantine not logged"
sparkd_stop a

step "a damaged node-key file is moved aside: a new key, a new id, said"
head -c 100 /dev/urandom >"$state/node-key"
sparkd_start a "$ns"
id4=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
[ "$id4" != "$id1" ] || fail "a damaged key kept the id"
[ -f "$state/node-key.corrupt" ] || fail "damaged key not kept as node-key.corrupt"
grep -q "state file $state/node-key is damaged" "$(log_of a)" || fail "the damaged key not logged"
assert_eq "$(tr -d '\n' <"$state/node-id")" "$id4" "node-id of the new key"
sparkd_stop a


step "an unusable state directory: logged, still serving"
: >"$TEST_TMP/not-a-dir"
sparkd_start c "$ns" --state-dir "$TEST_TMP/not-a-dir/state"
json=$(sparkc_of c --json status)
assert_eq "$(json_get "$json" 'd["state_saved"]')" False "state_saved"
grep -q "state directory $TEST_TMP/not-a-dir/state is unusable" "$(log_of c)" || fail "not logged"
sparkd_stop c
pass
