# A fixture Spark whose rail enp1s0f1np1 is a veth, with rocep1s0f1's GID table rewritten by the
# test as the kernel would: veth has no RDMA device. Sourced after lib.sh; gid_fixture_new
# copies spark-twins to $TEST_TMP/host and sets GID_DEV to the RDMA device's directory there.

GID_MAC=fe80:0000:0000:0000:0e42:a1ff:fe5b:0011

gid_fixture_new() {
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/host"
        GID_DEV=$(cd "$TEST_TMP/host/sys/class/infiniband/rocep1s0f1" && pwd -P)
        mv "$GID_DEV/ports" "$GID_DEV/ports.base"
}

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
