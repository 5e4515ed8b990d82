#!/usr/bin/env python3
"""A node's host root for the cluster harness (lib_cluster.sh), made from what its network
namespace has now: a sysfs tree in which each fabric netdev sits on the PCI function and RDMA
device the hardware would give it, with its MAC, MTU, carrier and a GID table that matches its
addresses, as the kernel writes them (tests/fixtures/hosts/README.md's conventions).

usage: cluster_host.py BASE OUT KIND NETNS
  BASE   a fixture host (its host facts are copied: driver, modules, NCCL, limits; not its sys
         tree, its network profiles or its addresses file)
  OUT    the host root to make (must not exist)
  KIND   spark: enp1s0fFnpF on 0000:01:00.F (rocep1s0fF) and its twin enP2p1s0fFnpF on
         0002:01:00.F (roceP2p1s0fF), F the QSFP port;
         nic2: two dual-port NICs, enpBs0fFnpF on 0000:0B:00.F (mlx5_N, N = 2(B-1)+F), no twins
  NETNS  the namespace whose netdevs named en* are the node's fabric ports
"""
import json
import os
import re
import shutil
import subprocess
import sys

RATE_UP = "200 Gb/sec (4X HDR)"
RATE_NO_LINK = "40 Gb/sec (4X QDR)"


def pci_of(kind, name):
    """(domain, PCI address, root port path, RDMA device) of a fabric netdev, or None."""
    if kind == "spark":
        m = re.fullmatch(r"enp1s0f([01])np\1", name)
        if m:
            f = m.group(1)
            return "0000", f"0000:01:00.{f}", "pci0000:00/0000:00:00.0", f"rocep1s0f{f}"
        m = re.fullmatch(r"enP2p1s0f([01])np\1", name)
        if m:
            f = m.group(1)
            return "0002", f"0002:01:00.{f}", "pci0002:00/0002:00:00.0", f"roceP2p1s0f{f}"
        return None
    if kind == "nic2":
        m = re.fullmatch(r"enp([12])s0f([01])np\2", name)
        if m:
            b, f = int(m.group(1)), int(m.group(2))
            return ("0000", f"0000:0{b}:00.{f}", f"pci0000:00/0000:00:0{b - 1}.0",
                    f"mlx5_{2 * (b - 1) + f}")
        return None
    sys.exit(f"cluster_host.py: kind {kind!r}: expected spark or nic2")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def mac_gid(mac):
    """The RoCE GID of a MAC's IPv6 link-local address (modified EUI-64), as the kernel fills it."""
    b = [int(x, 16) for x in mac.split(":")]
    eui = [b[0] ^ 2, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]
    groups = ["fe80", "0000", "0000", "0000"] + ["%02x%02x" % (eui[i], eui[i + 1]) for i in range(0, 8, 2)]
    return ":".join(groups)


def v4_gid(address):
    o = [int(x) for x in address.split(".")]
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(o)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    base, out, kind, netns = sys.argv[1:]
    if os.path.exists(out):
        sys.exit(f"cluster_host.py: {out} exists")
    shutil.copytree(base, out, symlinks=True,
                    ignore=shutil.ignore_patterns("sys", "expected", "addresses", "system-connections"))
    shutil.copytree(os.path.join(base, "sys", "module"), os.path.join(out, "sys", "module"))
    shutil.copytree(os.path.join(base, "sys", "devices", "virtual"), os.path.join(out, "sys", "devices", "virtual"))
    os.makedirs(os.path.join(out, "sys", "class", "net"))
    os.makedirs(os.path.join(out, "sys", "class", "infiniband"))
    os.symlink("../../devices/virtual/net/lo", os.path.join(out, "sys", "class", "net", "lo"))
    aer = {}
    for kind_aer in ("aer_dev_fatal", "aer_dev_nonfatal"):
        with open(os.path.join(base, "sys", "devices", "pci0000:00", "0000:00:00.0", "0000:01:00.1", kind_aer)) as f:
            aer[kind_aer] = f.read().rstrip("\n")
    links = json.loads(subprocess.run(["ip", "-n", netns, "-j", "addr", "show"], check=True,
                                      capture_output=True, text=True).stdout)
    for link in links:
        name = link["ifname"]
        where = pci_of(kind, name)
        if not where:
            continue
        _, pci, root, rdma = where
        fn_dir = os.path.join(out, "sys", "devices", *root.split("/"), pci)
        net_dir = os.path.join(fn_dir, "net", name)
        admin_up = "UP" in link["flags"]
        carrier = admin_up and "LOWER_UP" in link["flags"]
        write(os.path.join(net_dir, "ifindex"), str(link["ifindex"]))
        write(os.path.join(net_dir, "mtu"), str(link["mtu"]))
        write(os.path.join(net_dir, "address"), link["address"])
        write(os.path.join(net_dir, "flags"), "0x1003" if admin_up else "0x1002")
        write(os.path.join(net_dir, "operstate"), "up" if carrier else "down")
        if admin_up:
            write(os.path.join(net_dir, "carrier"), "1" if carrier else "0")
            write(os.path.join(net_dir, "speed"), "200000" if carrier else "-1")
        os.symlink("../../../" + pci, os.path.join(net_dir, "device"))
        os.symlink(os.path.relpath(net_dir, os.path.join(out, "sys", "class", "net")),
                   os.path.join(out, "sys", "class", "net", name))
        for attr, value in (("current_link_speed", "32.0 GT/s PCIe"), ("max_link_speed", "32.0 GT/s PCIe"),
                            ("current_link_width", "4"), ("max_link_width", "4")):
            write(os.path.join(fn_dir, attr), value)
        for attr, value in aer.items():
            write(os.path.join(fn_dir, attr), value)
        ib_dir = os.path.join(fn_dir, "infiniband", rdma)
        port = os.path.join(ib_dir, "ports", "1")
        write(os.path.join(port, "link_layer"), "Ethernet")
        write(os.path.join(port, "state"), "4: ACTIVE" if carrier else "1: DOWN")
        write(os.path.join(port, "phys_state"),
              "5: LinkUp" if carrier else "2: Polling" if admin_up else "3: Disabled")
        write(os.path.join(port, "rate"), RATE_UP if carrier else RATE_NO_LINK)
        # Up: the MAC's fe80 GID, then each IPv4 address, each as RoCE v1 and v2; down: the kernel
        # removes the netdev's GIDs and an all-zero entry 0 is left.
        gids = []
        if admin_up:
            gids.append(mac_gid(link["address"]))
            gids += [v4_gid(a["local"]) for a in link.get("addr_info", []) if a.get("family") == "inet"]
        if not gids:
            write(os.path.join(port, "gids", "0"), "0000:0000:0000:0000:0000:0000:0000:0000")
        for i, gid in enumerate(gids):
            for k, gid_type in enumerate(("IB/RoCE v1", "RoCE v2")):
                write(os.path.join(port, "gids", str(2 * i + k)), gid)
                write(os.path.join(port, "gid_attrs", "types", str(2 * i + k)), gid_type)
                write(os.path.join(port, "gid_attrs", "ndevs", str(2 * i + k)), name)
        os.symlink("../../../" + pci, os.path.join(ib_dir, "device"))
        os.symlink(os.path.relpath(ib_dir, os.path.join(out, "sys", "class", "infiniband")),
                   os.path.join(out, "sys", "class", "infiniband", rdma))


main()
