#!/usr/bin/env bash
# Read methods are open to whoever may open the socket; reload needs root or the admin group,
# decided from the kernel's view of the client (SO_PEERCRED, SO_PEERGROUPS).
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
nobody_uid=$(id -u nobody)
nogroup_gid=$(getent group nogroup | cut -d: -f3)
admin_gid=$(getent group adm | cut -d: -f3)
[ -n "$admin_gid" ] || skip "needs the group adm as a stand-in admin group"
as_nobody() { setpriv --reuid="$nobody_uid" --regid="$nogroup_gid" --clear-groups -- "$@"; }
as_admin_member() { setpriv --reuid="$nobody_uid" --regid="$nogroup_gid" --groups="$admin_gid" -- "$@"; }
as_admin_primary() { setpriv --reuid="$nobody_uid" --regid="$admin_gid" --clear-groups -- "$@"; }

ns=$(netns_new a)

step "default socket mode 0660: a stranger cannot connect"
printf '[api]\nsocket_group = root\n' >"$TEST_TMP/default.conf"
sparkd_start a "$ns" -c "$TEST_TMP/default.conf"
assert_eq "$(stat -c '%a %G' "$(sock_of a)")" "660 root" "socket mode and group"
rc=0; err=$(as_nobody "$SPARKC" --socket "$(sock_of a)" status 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status for a client without access"
assert_contains "$err" "Permission denied" "error"
sparkd_stop a

step "socket open to all, admin group adm"
printf '[api]\nsocket_mode = 0666\nadmin_group = adm\n' >"$TEST_TMP/open.conf"
sparkd_start b "$ns" -c "$TEST_TMP/open.conf"
assert_eq "$(stat -c '%a' "$(sock_of b)")" "666" "socket mode"
as_nobody "$SPARKC" --socket "$(sock_of b)" status >/dev/null || fail "nobody cannot read status"
as_nobody "$SPARKC" --socket "$(sock_of b)" version >/dev/null || fail "nobody cannot read version"

rc=0; err=$(as_nobody "$SPARKC" --socket "$(sock_of b)" reload 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of reload refused"
assert_contains "$err" "permission denied" "refusal"
assert_contains "$err" "-32001" "refusal code"
grep -q "refused reload for uid $nobody_uid" "$(log_of b)" || fail "refusal not logged"

as_admin_member "$SPARKC" --socket "$(sock_of b)" reload >/dev/null || fail "supplementary admin group refused"
as_admin_primary "$SPARKC" --socket "$(sock_of b)" reload >/dev/null || fail "primary admin group refused"
"$SPARKC" --socket "$(sock_of b)" reload >/dev/null || fail "root refused"

step "reload applies a new socket mode"
printf '[api]\nsocket_mode = 0600\nadmin_group = adm\n' >"$TEST_TMP/open.conf"
"$SPARKC" --socket "$(sock_of b)" reload >/dev/null
assert_eq "$(stat -c '%a' "$(sock_of b)")" "600" "socket mode after reload"
rc=0; as_nobody "$SPARKC" --socket "$(sock_of b)" status >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "stranger after the socket was closed to others"
sparkd_stop b
pass
