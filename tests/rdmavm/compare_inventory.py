#!/usr/bin/env python3
"""sparkd's inventory of a real kernel's RDMA sysfs against rdma-core's view of it.

usage: compare_inventory.py OUT_DIR SYSFS_CLASS_INFINIBAND
OUT_DIR holds what phase_inventory.sh saved: fabric.json, doctor.json, env.json (sparkc --json),
rdma-link.json (rdma -j link show) and ibv_devinfo.txt (ibv_devinfo -v). The GID table is read
from sysfs as show_gids does: gids/N, gid_attrs/types/N, gid_attrs/ndevs/N, all-zero entries and
entries without a type skipped. Prints one line per disagreement and exits 1 when there is one.
"""
import ipaddress
import json
import os
import re
import sys

out, ib = sys.argv[1], sys.argv[2]
problems = []


def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: sparkd says {got!r}, expected {want!r}")


def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def show_gids(dev, port):
    """The GID table of DEV's PORT: [(index, gid, type, netdev)], as show_gids lists it."""
    base = os.path.join(ib, dev, "ports", str(port))
    table = []
    for name in sorted(os.listdir(os.path.join(base, "gids")), key=int):
        gid = read(os.path.join(base, "gids", name))
        kind = read(os.path.join(base, "gid_attrs", "types", name))
        if not gid or set(gid) <= set("0:") or not kind:
            continue
        table.append((int(name), gid, kind, read(os.path.join(base, "gid_attrs", "ndevs", name)) or ""))
    return table


def ibv_devinfo():
    """{device: {port: {"state", "active_mtu", "link_layer", "phys_state", "gids": {index: (addr, type)}}}}"""
    devices, dev, port = {}, None, None
    for line in open(os.path.join(out, "ibv_devinfo.txt")):
        if m := re.match(r"hca_id:\s*(\S+)", line):
            dev = devices.setdefault(m.group(1), {})
        elif m := re.match(r"\s+port:\s*(\d+)", line):
            port = dev.setdefault(int(m.group(1)), {"gids": {}})
        elif port is not None and (m := re.match(r"\s+(state|active_mtu|link_layer|phys_state):\s*(.*)", line)):
            port[m.group(1)] = m.group(2).strip()
        elif port is not None and (m := re.match(r"\s+GID\[\s*(\d+)\]:\s*([^,]+),\s*(.*)", line)):
            port["gids"][int(m.group(1))] = (m.group(2).strip(), m.group(3).strip())
    return devices


fabric = load("fabric.json")
links = load("rdma-link.json")
verbs = ibv_devinfo()
ours = {d["name"]: d for d in fabric["rdma"]["devices"]}
kernel = sorted(os.listdir(ib))

expect("RDMA devices", sorted(ours), kernel)
expect("rdma link's devices", sorted({l["ifname"] for l in links}), kernel)
expect("ibv_devinfo's devices", sorted(verbs), kernel)
expect("inventory warnings", fabric["rdma"]["warnings"], [])
netdevs = {n["name"]: n for n in fabric["netdevs"]}
active = []
for link in links:
    dev, num = link["ifname"], link["port"]
    port = next((p for p in ours.get(dev, {}).get("ports", []) if p["port"] == num), None)
    if port is None:
        problems.append(f"{dev} port {num}: in rdma link, not in sparkc fabric")
        continue
    where = f"{dev} port {num}"
    expect(f"{where} state", port["state"], link["state"])
    expect(f"{where} physical state", port["phys_state"].upper().replace("LINKUP", "LINK_UP"), link["physical_state"])
    expect(f"{where} netdev", port["netdev"], link.get("netdev", ""))
    v = verbs.get(dev, {}).get(num, {"gids": {}})
    expect(f"{where} state number (ibv_devinfo {v.get('state')})", f"PORT_{port['state']} ({port['state_num']})", v.get("state"))
    expect(f"{where} active MTU (ibv_devinfo {v.get('active_mtu')})", str(port["active_mtu"]), (v.get("active_mtu") or "").split(" ")[0])
    expect(f"{where} link layer", port["link_layer"], v.get("link_layer"))
    table = show_gids(dev, num)
    expect(f"{where} GID table", [(g["index"], g["gid"], g["type"], g["netdev"]) for g in port["gids"]], table)
    # ibv_devinfo writes each GID as an address: the same entries, the same types.
    expect(f"{where} GIDs as ibv_devinfo shows them",
           {g["index"]: (str(ipaddress.IPv6Address(g["gid"])), g["type"]) for g in port["gids"]},
           {i: (str(ipaddress.IPv6Address(a)), t) for i, (a, t) in v["gids"].items()})
    # The RoCE v2 GID of the netdev's own IPv4 address, found by address: index 1 on rxe.
    addrs = [a.split("/")[0] for a in netdevs.get(port["netdev"], {}).get("addresses", []) if "." in a]
    by_address = [i for i, g, t, n in table if t == "RoCE v2" and n == port["netdev"]
                  and str(ipaddress.IPv6Address(g).ipv4_mapped) in addrs]
    expect(f"{where} RoCE v2 IPv4 GID index", port["roce_v2_ipv4_gid"], by_address[0] if by_address else None)
    # ibdev2netdev: the netdev lists the device that rdma link says runs over it.
    if port["netdev"] not in netdevs:
        problems.append(f"{where}: its netdev {port['netdev']} is not among sparkc fabric's netdevs")
    else:
        expect(f"{port['netdev']}'s RDMA devices include {dev}", dev in netdevs[port["netdev"]]["rdma_devices"], True)
    if link["state"] == "ACTIVE":
        active.append(f"{dev}:{num}")

env = {v["name"]: v["value"] for v in load("env.json")["variables"]}
expect("NCCL_IB_HCA", env.get("NCCL_IB_HCA"), "=" + ",".join(sorted(active)))
expect("NCCL_IB_GID_INDEX", env.get("NCCL_IB_GID_INDEX"), "1")

doctor = {c["id"]: c for c in load("doctor.json")["checks"]}
for dev in kernel:
    if dev not in doctor["rdma-devices"]["summary"]:
        problems.append(f"doctor's rdma-devices does not name {dev}: {doctor['rdma-devices']['summary']}")
# The checks that only need what a soft-RoCE node has: devices, active ports, MTU, GIDs.
for check in ("rdma-devices", "ports-active", "mtu", "roce-v2-gid", "port-addresses"):
    expect(f"doctor's {check} ({doctor[check]['summary']})", doctor[check]["status"], "ok")
gid_lines = "\n".join(doctor["roce-v2-gid"]["evidence"])
for dev in kernel:
    if not re.search(rf"^{dev} port 1: RoCE v2 GID 1 for ", gid_lines, re.M):
        problems.append(f"doctor's roce-v2-gid does not give {dev} GID 1: {gid_lines}")

for p in problems:
    print("MISMATCH:", p)
print(f"inventory vs rdma link, ibv_devinfo and the GID table: {len(kernel)} devices, "
      f"{len(links)} ports, {len(problems)} mismatches")
sys.exit(1 if problems else 0)
