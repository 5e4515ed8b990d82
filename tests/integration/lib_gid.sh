# A fixture Spark whose rail enp1s0f1np1 is a veth, with rocep1s0f1's GID table rewritten by the
# test as the kernel would: veth has no RDMA device. Sourced after lib.sh; gid_fixture_new
# copies spark-twins to $TEST_TMP/host and sets GID_DEV to the RDMA device's directory there.

GID_MAC=fe80:0000:0000:0000:0e42:a1ff:fe5b:0011

gid_fixture_new() {
        fixture_host spark-twins "$TEST_TMP/host"
        GID_DEV=$(cd "$TEST_TMP/host/sys/class/infiniband/rocep1s0f1" && pwd -P)
        touch -a -d @0 "$GID_DEV/ports/1/gids/0"
        cat "$GID_DEV/ports/1/gids/0" >/dev/null
        [ "$(stat -c %X "$GID_DEV/ports/1/gids/0")" != 0 ] ||
                skip "reads on $TEST_TMP leave access times as they are (noatime): the GID watch's re-reads cannot be seen"
        mv "$GID_DEV/ports" "$GID_DEV/ports.base"
}

# gid_mark_unread: marks the live table unread; gid_read_since_mark is then true once something
# (the daemon; `sparkc env` too) has read it. Every read of the table reads gids/0, and the first
# read after its access time was set to the epoch sets it to now (relatime updates an access time
# older than the change time). The daemon shows no re-read that finds the table as it was.
gid_mark_unread() { touch -a -d @0 "$GID_DEV/ports/1/gids/0"; }
gid_read_since_mark() { [ "$(stat -c %X "$GID_DEV/ports/1/gids/0")" != 0 ]; }

# mapped 192.168.177.11 -> 0000:...:ffff:c0a8:b10b
mapped() {
        local IFS=.
        set -- $1
        printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

# gid_table NAME GID...: port 1 of rocep1s0f1 with these GIDs at 0, 1, ... as RoCE v1/v2 pairs
# (each GID twice), "-" an empty entry pair; then made the live table. Each state is swapped in
# whole, by renaming a symlink, so the daemon never reads half a table.
gid_table() {
        local name=$1 dir="$GID_DEV/ports.$1" i=0 g t
        shift
        cp -a "$GID_DEV/ports.base" "$dir"
        rm -rf "$dir/1/gids" "$dir/1/gid_attrs"
        mkdir -p "$dir/1/gids" "$dir/1/gid_attrs/types" "$dir/1/gid_attrs/ndevs"
        for g in "$@"; do
                for t in "IB/RoCE v1" "RoCE v2"; do
                        if [ "$g" = - ]; then
                                echo 0000:0000:0000:0000:0000:0000:0000:0000 >"$dir/1/gids/$i"
                        else
                                echo "$g" >"$dir/1/gids/$i"
                                echo "$t" >"$dir/1/gid_attrs/types/$i"
                                echo enp1s0f1np1 >"$dir/1/gid_attrs/ndevs/$i"
                        fi
                        i=$((i + 1))
                done
        done
        ln -sfn "ports.$name" "$GID_DEV/ports.next"
        mv -T "$GID_DEV/ports.next" "$GID_DEV/ports"
}

# gid_carrier NS up|down: sets the carrier of node a's rail (by fb, its far end in NS) and waits
# until the daemon has seen it, as the kernel merges carrier changes that it has not reported yet,
# and has re-read the GID table after it.
gid_carrier() {
        local want
        want=$([ "$2" = up ] && echo True || echo False)
        gid_mark_unread
        ip -n "$1" link set fb "$2"
        wait_until 5 link_is a enp1s0f1np1 "l['oper_up'] == $want" || fail "the daemon did not see the carrier $2"
        wait_until 5 gid_read_since_mark || fail "the GID table was not re-read after the carrier went $2"
}

# gid_flap NS CMD...: node a's rail loses its carrier, CMD runs (the kernel's rewrite of the GID
# table while the link is down), and the carrier comes back; see gid_carrier.
gid_flap() {
        local ns=$1
        shift
        gid_carrier "$ns" down
        "$@"
        gid_carrier "$ns" up
}
