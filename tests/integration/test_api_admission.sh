#!/usr/bin/env bash
# API admission keeps root and the admin group served whatever a reader does: a reader's 1,000
# idle connections stop at max_clients_per_uid; with that cap raised, at the slots kept by
# reserved_admin_clients; either way root's status and reload and an admin's probe are answered
# within 100 ms, and each refusal names the limit hit. After 2,000 clients that connect, send
# half a line and close, the next client is served at once: connections whose peer hung up stop
# counting before anyone is refused.
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
command -v useradd >/dev/null && command -v groupadd >/dev/null || skip "needs useradd and groupadd"
# 1,000 connections held by one client, and as many in the daemon.
ulimit -n 8192 || skip "cannot raise the open file limit"

tag=$(printf '%x' $$)
sock_grp=spkS$tag admin_grp=spkA$tag
groupadd "$sock_grp" && CLEANUP_CMDS+=("groupdel $sock_grp")
groupadd "$admin_grp" && CLEANUP_CMDS+=("groupdel $admin_grp")
useradd -M -N -s /usr/sbin/nologin -G "$sock_grp" "spkr$tag" && CLEANUP_CMDS+=("userdel spkr$tag")
useradd -M -N -s /usr/sbin/nologin -G "$sock_grp,$admin_grp" "spka$tag" && CLEANUP_CMDS+=("userdel spka$tag")
as() { local user=$1; shift; setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@"; }
load() { python3 "$TESTS_DIR/admission_load.py" "$@"; }

# served_while_held NAME: root's status and reload and the admin's probe, each within 100 ms.
served_while_held() {
        local sock
        sock=$(sock_of "$1")
        load call "$sock" status || fail "root's status while a reader holds the socket"
        load call "$sock" reload || fail "root's reload while a reader holds the socket"
        as "spka$tag" /usr/bin/python3 "$TESTS_DIR/admission_load.py" call "$sock" probe '{"peer":"nosuch"}' ||
                fail "the admin's probe while a reader holds the socket"
}

# reader_holds NAME N: the reader opens N idle connections and keeps them (on fd 3) until
# reader_releases; prints "ACCEPTED REFUSED FIRST_REFUSAL".
reader_holds() {
        rm -f "$TEST_TMP/held"
        chmod 0777 "$TEST_TMP"
        exec 3> >(as "spkr$tag" /usr/bin/python3 "$TESTS_DIR/admission_load.py" hold "$(sock_of "$1")" "$2" "$TEST_TMP/held")
        wait_until 30 test -s "$TEST_TMP/held" || fail "the reader's $2 connections were not all answered"
        cat "$TEST_TMP/held"
}
reader_releases() { exec 3>&-; }

ns=$(netns_new a)
printf '[api]\nsocket_group = %s\nadmin_group = %s\n' "$sock_grp" "$admin_grp" >"$TEST_TMP/a.conf"
sparkd_start a "$ns" -c "$TEST_TMP/a.conf"

step "a reader's 1,000 idle connections stop at max_clients_per_uid (default 64)"
held=$(reader_holds a 1000)
echo "reader: $held"
read -r accepted refused why <<<"$held"
assert_eq "$accepted $refused" "64 936" "the reader's connections admitted and refused"
assert_contains "$why" "too many clients: uid $(id -u "spkr$tag") holds 64 connections (max_clients_per_uid 64)" \
        "the refusal"
served_while_held a
grep -q "refusing a client: uid $(id -u "spkr$tag") holds 64 connections" "$(log_of a)" ||
        fail "the refusal is not logged"
reader_releases
sparkd_stop a

step "with max_clients_per_uid raised, the reader stops at the slots kept for root and admins"
printf 'max_clients = 600\nmax_clients_per_uid = 1000\n' >>"$TEST_TMP/a.conf"
sparkd_start b "$ns" -c "$TEST_TMP/a.conf"
held=$(reader_holds b 1000)
echo "reader: $held"
read -r accepted refused why <<<"$held"
assert_eq "$accepted $refused" "584 416" "the reader's connections admitted and refused"
assert_contains "$why" "the last 16 of max_clients 600 are kept for root and the admin group" "the refusal"
served_while_held b
reader_releases
sparkd_stop b

step "2,000 clients send half a line and close; the next one is served at once"
printf '[api]\nmax_clients = 256\n' >"$TEST_TMP/c.conf"
sparkd_start c "$ns" -c "$TEST_TMP/c.conf"
load burst "$(sock_of c)" 2000 || fail "the client after the burst was not served at once"
sparkd_stop c
pass
