#!/usr/bin/env bash
# The state directory keeps the node id across restarts; damaged state is moved aside with a
# warning; an unusable state directory is logged and the daemon serves anyway.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)
state=$TEST_TMP/a.state

step "the node id survives a restart"
sparkd_start a "$ns"
id1=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
[ -f "$state/node-id" ] || fail "node-id not saved"
sparkd_stop a
sparkd_start a "$ns"
id2=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
assert_eq "$id2" "$id1" "node id after restart"
sparkd_stop a

step "a damaged node-id file is moved aside"
head -c 100 /dev/urandom >"$state/node-id"
sparkd_start a "$ns"
id3=$(json_get "$(sparkc_of a --json status)" 'd["node_id"]')
[ "$id3" != "$id1" ] || fail "garbage accepted as a node id"
[ -f "$state/node-id.corrupt" ] || fail "damaged file not kept as node-id.corrupt"
grep -q "event=state-quarantined" "$(log_of a)" || fail "quarantine not logged"
sparkd_stop a

step "an unusable state directory: logged, still serving"
: >"$TEST_TMP/not-a-dir"
sparkd_start c "$ns" --state-dir "$TEST_TMP/not-a-dir/state"
json=$(sparkc_of c --json status)
assert_eq "$(json_get "$json" 'd["state_saved"]')" False "state_saved"
grep -q "state directory $TEST_TMP/not-a-dir/state is unusable" "$(log_of c)" || fail "not logged"
sparkd_stop c
pass
