# Sourced by guest.sh: the inventory of a real kernel's RDMA sysfs. Node A's daemon (rails a0, a1)
# answers `sparkc fabric`, `doctor` and `env`; rdma-core's view (`rdma link`, `ibv_devinfo -v`)
# and the GID table read as show_gids does are saved beside them, and compare_inventory.py says
# whether they agree.
sparkd_up nodea '[fabric]\ninterfaces = a0, a1\n'
for cmd in fabric doctor env; do
        sparkc --socket /run/nodea.sock --json $cmd >"$out/$cmd.json" || true
        sparkc --socket /run/nodea.sock $cmd >"$out/$cmd.txt" 2>&1 || true
done
rdma -j link show >"$out/rdma-link.json"
ibv_devinfo -v >"$out/ibv_devinfo.txt"
# What the kernel shows of one device and its netdev, for the fixture trees.
for path in /sys/class/infiniband/rxe_a0 /sys/class/net/a0 /sys/class/infiniband/rxe_a0/device \
        /sys/class/net/a0/device /sys/class/infiniband/rxe_a0/ports/1/gid_attrs/ndevs/0; do
        echo "$path -> $(readlink "$path" || echo '(no link)')"
done >"$out/sysfs-rxe_a0.txt"
(cd /sys/class/infiniband/rxe_a0 && grep -rs . node_type node_guid ports/1/state ports/1/phys_state \
        ports/1/link_layer ports/1/rate ports/1/gids/0 ports/1/gids/1 ports/1/gids/2 \
        ports/1/gid_attrs/types/0 ports/1/gid_attrs/types/1 ports/1/gid_attrs/types/2 \
        ports/1/gid_attrs/ndevs/0 ports/1/gid_attrs/ndevs/1 ports/1/gid_attrs/ndevs/2; ls ports/1/gids | wc -l; ls) \
        >>"$out/sysfs-rxe_a0.txt" 2>&1 || true
python3 "$share/compare_inventory.py" "$out" /sys/class/infiniband
sparkd_down nodea
