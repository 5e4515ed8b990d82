# Harness for integration tests: real sparkd daemons in fresh network namespaces, driven with the
# real sparkc. Everything a test creates is removed on exit, also when the test fails.
# A test sources this file, calls its steps, and ends with `pass`.
# Exit codes follow meson: 0 pass, 1 fail, 77 skip.
set -euo pipefail

SPARKD=${SPARKD_BIN:?SPARKD_BIN must name the sparkd binary}
SPARKC=${SPARKC_BIN:?SPARKC_BIN must name the sparkc binary}
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEST_NAME=$(basename "$0" .sh)

skip() { echo "SKIP: $TEST_NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "needs ip (iproute2)"

TEST_TMP=$(mktemp -d "/tmp/sparkd-$TEST_NAME.XXXXXX")
chmod 755 "$TEST_TMP"
declare -a DAEMON_PIDS=()
declare -A DAEMON_PID_OF=()
# Commands cleanup runs after the daemons are gone (a test's mounts, users, groups).
declare -a CLEANUP_CMDS=()

cleanup() {
        local rc=$? pid ns i
        for pid in "${DAEMON_PIDS[@]}"; do
                kill -TERM "$pid" 2>/dev/null || true
        done
        for pid in "${DAEMON_PIDS[@]}"; do
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$pid" 2>/dev/null || true
        done
        for ((i = ${#CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
                eval "${CLEANUP_CMDS[i]}" >/dev/null 2>&1 || true
        done
        for ns in $(ip netns list | awk '{print $1}' | grep "^sparkd-$$-" || true); do
                ip netns del "$ns" 2>/dev/null || true
        done
        if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
                for f in "$TEST_TMP"/*.log; do
                        [ -f "$f" ] || continue
                        echo "--- $f (last 40 lines)"
                        tail -n 40 "$f"
                done
        fi
        [ -n "${KEEP_TEST_TMP:-}" ] || rm -rf "$TEST_TMP"
        exit "$rc"
}
trap cleanup EXIT

fail() {
        echo "FAIL: $TEST_NAME: $*" >&2
        exit 1
}

pass() {
        echo "PASS: $TEST_NAME"
        exit 0
}

step() { echo "--- $*"; }

# netns_new SHORTNAME: a namespace of our own, with loopback up; prints its real name. Callers
# use a=$(netns_new a), a subshell, so the name is derived ($$ is the test's PID there too) and
# cleanup deletes every namespace with this test's prefix.
netns_new() {
        local ns="sparkd-$$-$1"
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        echo "$ns"
}

# veth_pair NS_A IF_A NS_B IF_B [CIDR_A CIDR_B]: a cable between two namespaces, both ends up.
veth_pair() {
        local na=$1 ia=$2 nb=$3 ib=$4
        # Made inside the namespaces, never under a name in the host's, so tests may run side by
        # side. Both ends then share an ifindex, as a physical NIC's link does with itself, and
        # the kernel merges fast carrier changes into one notification as it does for real NICs.
        ip link add "$ia" netns "$na" type veth peer name "$ib" netns "$nb"
        [ -z "${5:-}" ] || ip -n "$na" addr add "$5" dev "$ia"
        [ -z "${6:-}" ] || ip -n "$nb" addr add "$6" dev "$ib"
        ip -n "$na" link set "$ia" up
        ip -n "$nb" link set "$ib" up
}

# flap_link NS IFACE COUNT: takes IFACE down and up COUNT times, as fast as ip(8) allows.
flap_link() {
        local i
        for i in $(seq "$3"); do
                ip -n "$1" link set "$2" down
                ip -n "$1" link set "$2" up
        done
}

mtu_of() { ip -n "$1" -o link show "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }

sock_of() { echo "$TEST_TMP/$1.sock"; }
log_of() { echo "$TEST_TMP/$1.log"; }

sparkc_of() {
        local name=$1
        shift
        "$SPARKC" --socket "$(sock_of "$name")" "$@"
}

# wait_until TIMEOUT_SEC CMD...: polls CMD every 50 ms until it succeeds.
wait_until() {
        local timeout=$1 i
        shift
        for ((i = 0; i < timeout * 20; i++)); do
                if "$@" >/dev/null 2>&1; then return 0; fi
                sleep 0.05
        done
        return 1
}

# sparkd_start NAME NETNS [ARGS...]: starts a daemon in NETNS and waits until its socket answers.
sparkd_start() {
        local name=$1 ns=$2 pid
        shift 2
        # No system bus for these daemons: a host's real avahi-daemon must not see test nodes.
        DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TEST_TMP/no-bus \
                ip netns exec "$ns" "$SPARKD" --foreground --log-target=stderr --socket "$(sock_of "$name")" \
                --state-dir "$TEST_TMP/$name.state" "$@" >>"$(log_of "$name")" 2>&1 &
        pid=$!
        DAEMON_PIDS+=("$pid")
        DAEMON_PID_OF[$name]=$pid
        if ! wait_until "${SPARKD_START_TIMEOUT:-10}" sparkc_of "$name" status; then
                kill -0 "$pid" 2>/dev/null || fail "sparkd $name exited during start-up"
                fail "sparkd $name did not answer on $(sock_of "$name") within ${SPARKD_START_TIMEOUT:-10} s"
        fi
}

# fixture_host NAME DEST: a copy of the fixture host tests/fixtures/hosts/NAME at DEST, its NCCL
# libraries (ELF headers of an AArch64 library, as on a Spark) made this machine's, as sparkd's own
# header is: the doctor fails a library built for another machine than the daemon's.
fixture_host() {
        cp -a "$TESTS_DIR/../fixtures/hosts/$1" "$2"
        fixture_nccl_as_sparkd "$2"
}

# fixture_nccl_as_sparkd HOST: the ELF headers standing in for NCCL under HOST made the header of
# the sparkd under test, so the doctor finds a library built for the machine it runs on.
fixture_nccl_as_sparkd() {
        local lib
        while IFS= read -r -d '' lib; do
                [ -s "$lib" ] && [ "$(head -c 4 "$lib" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
                head -c 64 "$SPARKD_BIN" >"$lib"
        done < <(find "$1" -name 'libnccl.so*' -type f -print0)
}

# spark_fixture_start NAME NETNS HOST: a sparkd on a copy (at HOST, so a test may change it) of the
# fixture Spark spark-twins, its fabric netdev with its address in NETNS, with a cluster key and no
# peers to find: its doctor fails no check, and warns only where sparkd's memlock is limited.
spark_fixture_start() {
        local name=$1 ns=$2 host=$3
        fixture_host spark-twins "$host"
        ip -n "$ns" link add enp1s0f1np1 type veth peer name peer0
        ip -n "$ns" addr add 192.168.177.11/24 dev enp1s0f1np1
        ip -n "$ns" link set enp1s0f1np1 up
        ip -n "$ns" link set peer0 up
        "$SPARKC" keygen "$TEST_TMP/$name.key" >/dev/null
        printf '[daemon]\nhost_root = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n[peers]\nkey_file = %s\nmdns = no\n' \
                "$host" "$TEST_TMP/$name.key" >"$TEST_TMP/$name.conf"
        sparkd_start "$name" "$ns" -c "$TEST_TMP/$name.conf"
}

# sparkd_caught_up NAME: returns once NAME's daemon has handled what was waiting for it when this
# was called (kernel notifications, timers due). A request's connection is accepted in one turn of
# the daemon's loop and read in a later one, so everything that was ready when it connected was
# handled before the answer; a second request does the same for what that handling queued.
sparkd_caught_up() {
        sparkc_of "$1" status >/dev/null || fail "sparkd $1 does not answer"
        sparkc_of "$1" status >/dev/null || fail "sparkd $1 does not answer"
}

# link_is NAME IFACE PYEXPR: true when PYEXPR holds for the entry `l` that NAME's daemon lists for
# IFACE in `sparkc links`: what the daemon has seen, not what the kernel has now.
link_is() {
        local json
        json=$(sparkc_of "$1" --json links 2>/dev/null) || return 1
        [ "$(json_get "$json" "[bool($3) for l in d['links'] if l['name'] == '$2'] == [True]")" = True ]
}

# The line of each daemon's log after which its watcher has every event (watch_events).
declare -A WATCH_LOG_MARK=()

log_lines() { if [ -f "$(log_of "$1")" ]; then wc -l <"$(log_of "$1")"; else echo 0; fi; }

# watch_events NAME: records the daemon's events (JSON lines) in $TEST_TMP/NAME.events.
watch_events() {
        local name=$1 pid before after try
        # The watcher has what the daemon emits once it subscribed; the log has everything. An event
        # logged while the watcher subscribes may or may not reach it: then it subscribes again, so
        # that events_delivered knows where in the log the watcher's events begin.
        for try in 1 2 3 4 5; do
                before=$(log_lines "$name")
                "$SPARKC" --socket "$(sock_of "$name")" --json watch >"$TEST_TMP/$name.events" 2>"$TEST_TMP/$name.watch" &
                pid=$!
                DAEMON_PIDS+=("$pid")
                wait_until 5 grep -q watching "$TEST_TMP/$name.watch" || fail "watch on $name did not start"
                after=$(log_lines "$name")
                if [ "$after" = "$before" ] ||
                        ! sed -n "$((before + 1)),${after}p" "$(log_of "$name")" | grep -q ' event='; then
                        WATCH_LOG_MARK[$name]=$after
                        return 0
                fi
                kill "$pid"
                wait "$pid" 2>/dev/null || true
        done
        fail "watch on $name: events kept coming while it subscribed ($try tries)"
}

# count_events NAME EVENT [IFACE]: how many such events the watcher of NAME has seen.
count_events() {
        local file="$TEST_TMP/$1.events"
        python3 - "$file" "$2" "${3:-}" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == sys.argv[2] and (not sys.argv[3] or e["fields"].get("iface") == sys.argv[3]):
        n += 1
print(n)
PY
}

# wait_events NAME EVENT IFACE MIN TIMEOUT_SEC: until at least MIN such events were seen.
wait_events() {
        local i
        for ((i = 0; i < $5 * 10; i++)); do
                [ "$(count_events "$1" "$2" "$3")" -ge "$4" ] && return 0
                sleep 0.1
        done
        return 1
}

# events_delivered NAME EVENT [IFACE]: true once the watcher of NAME has every such event the
# daemon logged since the watcher subscribed. The daemon logs an event before it sends it, so after
# something that shows the daemon is done (sparkd_caught_up), this makes a count of events final.
events_delivered() {
        local logged
        logged=$(tail -n "+$((WATCH_LOG_MARK[$1] + 1))" "$(log_of "$1")" | grep -E -- " event=$2( |\$)" |
                { if [ -n "${3:-}" ]; then grep -E -- " iface=$3( |\$)"; else cat; fi; } | wc -l)
        [ "$(count_events "$1" "$2" "${3:-}")" -ge "$logged" ]
}

# events_final NAME EVENT [IFACE]: returns once the watcher of NAME has every such event that the
# daemon emitted up to the call and while handling what was waiting for it then: a count of them
# taken after is final unless something new happens.
events_final() {
        sparkd_caught_up "$1"
        wait_until 10 events_delivered "$@" || fail "the watcher of $1 lacks $2 events that its log has"
}

pid_of() { echo "${DAEMON_PID_OF[$1]}"; }

# pids_in_ns NS PATTERN...: the processes in this test's namespaces whose command line matches
# PATTERN (grep -E), one per line; never another test's, though they may run side by side.
pids_in_ns() {
        local pattern=${*: -1} ns pid
        for ns in "${@:1:$#-1}"; do
                for pid in $(ip netns pids "$ns" 2>/dev/null); do
                        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE -- "$pattern" && echo "$pid"
                done
        done
        return 0
}

# sparkd_stop NAME [SIGNAL]: stops a daemon and checks it exited 0 (sanitizer reports fail it).
sparkd_stop() {
        local name=$1 sig=${2:-TERM} pid rc=0
        pid=$(pid_of "$name")
        kill -"$sig" "$pid"
        wait "$pid" || rc=$?
        [ "$rc" = 0 ] || fail "sparkd $name exited with status $rc after SIG$sig"
}

assert_contains() {
        local haystack=$1 needle=$2 what=${3:-output}
        [[ "$haystack" == *"$needle"* ]] || fail "$what does not contain '$needle': $haystack"
}

assert_not_contains() {
        local haystack=$1 needle=$2 what=${3:-output}
        [[ "$haystack" != *"$needle"* ]] || fail "$what contains '$needle': $haystack"
}

assert_eq() {
        [ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"
}

# json_get JSON PYTHON_EXPR: evaluates an expression over the parsed document `d`.
json_get() {
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# is_sanitizer_build: true when $SPARKD runs with AddressSanitizer or UBSan linked in.
is_sanitizer_build() { ldd "$SPARKD" 2>/dev/null | grep -E 'lib(asan|ubsan)' >/dev/null; }

# sparkd_under_valgrind: every daemon sparkd_start starts from now on runs under memcheck (exec
# keeps the PID sparkd_start waits on), its report in $TEST_TMP/valgrind-PID.log; any memory error
# or definitely/indirectly lost block makes it exit 99. Skips without valgrind and for a
# sanitizer build (the two cannot run together). The probe helpers it spawns run natively.
sparkd_under_valgrind() {
        command -v valgrind >/dev/null || skip "needs valgrind"
        is_sanitizer_build && skip "sparkd is a sanitizer build"
        cat >"$TEST_TMP/sparkd-valgrind" <<WRAP
#!/bin/sh
exec valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect \\
        --show-leak-kinds=definite,indirect --error-exitcode=99 --child-silent-after-fork=yes \\
        --log-file="$TEST_TMP/valgrind-%p.log" "$SPARKD" "\$@"
WRAP
        chmod +x "$TEST_TMP/sparkd-valgrind"
        SPARKD=$TEST_TMP/sparkd-valgrind
        SPARKD_START_TIMEOUT=60
}
