# mDNS between network namespaces: each "host" gets its own D-Bus system bus and its own
# avahi-daemon, in a private mount namespace (tmpfs over /run/dbus and /run/avahi-daemon) inside
# its network namespace. Sourced after lib.sh; every process it starts is in DAEMON_PIDS, so
# lib.sh's cleanup stops them on exit, also when the test fails.
#
#   avahi_host NS NAME [--no-avahi]  start the host's bus and avahi-daemon (host name NAME) and
#                               wait until avahi-daemon answers on that bus (--no-avahi: bus only)
#   avahi_daemon_stop NS / avahi_daemon_start NS  stop or (re)start only its avahi-daemon
#   in_avahi_host NS CMD...     run CMD inside that host (its mount and network namespaces)
#   in_avahi_host_bg NS CMD...  the same in the background: the PID (CMD's own) is in
#                               AVAHI_BG_PID and in DAEMON_PIDS; redirect the call's output
#   sparkd_start_avahi NAME NS [ARGS...]  sparkd_start, inside an avahi host
#   avahi_host_stop NS          stop the host's processes now and wait for them
#
# Do not put `in_avahi_host ... &` in the background: $! would be a subshell, not CMD.

for _cmd in avahi-daemon dbus-daemon dbus-send avahi-browse nsenter unshare; do
        command -v "$_cmd" >/dev/null || skip "needs $_cmd (Debian: avahi-daemon avahi-utils dbus util-linux)"
done
unset _cmd

declare -A AVAHI_HOLDER_OF=() AVAHI_PIDS_OF=() AVAHI_DAEMON_OF=() AVAHI_NAME_OF=()
AVAHI_BG_PID=

# The holder keeps the host's mount namespace alive; it is the process nsenter enters by.
_avahi_holder_pid() {
        local pid=${AVAHI_HOLDER_OF[$1]:-}
        [ -n "$pid" ] || fail "no avahi host in namespace $1 (call avahi_host first)"
        echo "$pid"
}

in_avahi_host() {
        local pid
        pid=$(_avahi_holder_pid "$1")
        shift
        nsenter -t "$pid" -m -n "$@"
}

in_avahi_host_bg() {
        local pid
        pid=$(_avahi_holder_pid "$1")
        shift
        # nsenter execs CMD (no PID namespace, so no fork): $! is CMD itself.
        nsenter -t "$pid" -m -n "$@" &
        AVAHI_BG_PID=$!
        DAEMON_PIDS+=("$AVAHI_BG_PID")
}

_avahi_has_bus() {
        in_avahi_host "$1" test -S /run/dbus/system_bus_socket
}

# Asks the bus whether the name is owned first: a message to an unowned name would ask D-Bus to
# activate avahi-daemon, which a test must never cause.
_avahi_is_running() {
        in_avahi_host "$1" dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Avahi | grep -q 'boolean true' &&
                in_avahi_host "$1" dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
                        org.freedesktop.Avahi.Server.GetState | grep -q 'int32 2' # AVAHI_SERVER_RUNNING
}

_avahi_track() {
        local ns=$1 pid=$2
        DAEMON_PIDS+=("$pid")
        AVAHI_PIDS_OF[$ns]="${AVAHI_PIDS_OF[$ns]:-} $pid"
}

avahi_host() {
        local ns=$1 name=$2 pid

        # /run/avahi-daemon may not exist on a host without Avahi; mounting over it needs it.
        mkdir -p /run/dbus /run/avahi-daemon
        # sleep infinity keeps the mount namespace alive: dbus-daemon and avahi-daemon enter it by its PID.
        ip netns exec "$ns" unshare --mount --propagation private sh -c \
                'mount -t tmpfs tmpfs /run/dbus && mount -t tmpfs tmpfs /run/avahi-daemon && exec sleep infinity' \
                >>"$TEST_TMP/avahi-$name.log" 2>&1 &
        pid=$!
        _avahi_track "$ns" "$pid"
        # ip netns exec, unshare and sh all exec: the PID is sleep's once the mounts are made.
        wait_until 5 grep -qx sleep "/proc/$pid/comm" || fail "avahi host $name: mount namespace not set up"
        AVAHI_HOLDER_OF[$ns]=$pid
        AVAHI_NAME_OF[$ns]=$name

        nsenter -t "$pid" -m -n dbus-daemon --system --nofork --nopidfile >>"$TEST_TMP/dbus-$name.log" 2>&1 &
        _avahi_track "$ns" "$!"
        wait_until 5 _avahi_has_bus "$ns" || fail "avahi host $name: dbus-daemon did not start"

        printf '[server]\nhost-name=%s\nuse-ipv4=yes\nuse-ipv6=no\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-workstation=no\n' \
                "$name" >"$TEST_TMP/avahi-$name.conf"
        [ "${3:-}" = --no-avahi ] || avahi_daemon_start "$ns"
}

# avahi_daemon_start NS: (re)starts the avahi-daemon of an avahi host and waits until it runs.
avahi_daemon_start() {
        local ns=$1 name pid
        pid=$(_avahi_holder_pid "$ns")
        name=${AVAHI_NAME_OF[$ns]}
        nsenter -t "$pid" -m -n avahi-daemon -f "$TEST_TMP/avahi-$name.conf" --no-drop-root --no-chroot \
                --no-rlimits >>"$TEST_TMP/avahi-$name.log" 2>&1 &
        AVAHI_DAEMON_OF[$ns]=$!
        _avahi_track "$ns" "$!"
        wait_until 10 _avahi_is_running "$ns" || fail "avahi host $name: avahi-daemon did not reach RUNNING in 10 s"
}

# avahi_daemon_stop NS: stops only the avahi-daemon of an avahi host (its bus stays).
avahi_daemon_stop() {
        local ns=$1
        [ -n "${AVAHI_DAEMON_OF[$ns]:-}" ] || return 0
        _avahi_kill "$ns" "${AVAHI_DAEMON_OF[$ns]}"
        unset "AVAHI_DAEMON_OF[$ns]"
}

# sparkd_start NAME NS [ARGS...] with the daemon inside NS's avahi host, so that its Avahi client
# talks to that host's avahi-daemon; sparkd_stop, sparkc_of and log_of work as usual.
sparkd_start_avahi() {
        local name=$1 ns=$2
        shift 2
        in_avahi_host_bg "$ns" "$SPARKD" --foreground --log-target=stderr --socket "$(sock_of "$name")" \
                --state-dir "$TEST_TMP/$name.state" "$@" >>"$(log_of "$name")" 2>&1
        DAEMON_PID_OF[$name]=$AVAHI_BG_PID
        if ! wait_until 10 sparkc_of "$name" status; then
                kill -0 "$AVAHI_BG_PID" 2>/dev/null || fail "sparkd $name exited during start-up"
                fail "sparkd $name did not answer on $(sock_of "$name") within 10 s"
        fi
}

# _avahi_kill NS PID...: TERM, up to 5 s, KILL; then forgets the PIDs (lib.sh's cleanup must not
# signal these numbers again: they may be reused).
_avahi_kill() {
        local ns=$1 pid p keep=() left=""
        shift
        for pid in "$@"; do
                kill -TERM "$pid" 2>/dev/null || true
        done
        for pid in "$@"; do
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
        done
        for p in "${DAEMON_PIDS[@]}"; do
                [[ " $* " == *" $p "* ]] || keep+=("$p")
        done
        DAEMON_PIDS=("${keep[@]}")
        for p in ${AVAHI_PIDS_OF[$ns]:-}; do
                [[ " $* " == *" $p "* ]] || left+=" $p"
        done
        AVAHI_PIDS_OF[$ns]=$left
}

avahi_host_stop() {
        local ns=$1
        # shellcheck disable=SC2086 # a list of PIDs
        _avahi_kill "$ns" ${AVAHI_PIDS_OF[$ns]:-}
        unset "AVAHI_PIDS_OF[$ns]" "AVAHI_HOLDER_OF[$ns]" "AVAHI_DAEMON_OF[$ns]" "AVAHI_NAME_OF[$ns]"
}
