#!/usr/bin/env python3
"""What stands in for `netplan apply` on a node of the cluster harness (a network namespace with
no systemd-networkd): the files of /etc/netplan (the node's own, bound there) are first generated
by the real netplan under a scratch root, so netplan itself accepts them as written; then each
ethernets entry's IPv4 addresses replace the netdev's and its MTU is set, with ip(8), in the
namespace this runs in. Any other subcommand goes to the real netplan.

usage: netplan_standin.py REAL_NETPLAN SUBCOMMAND [ARGS...]
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

real, args = sys.argv[1], sys.argv[2:]
if args[:1] != ["apply"]:
    os.execv(real, [real] + args)

files = sorted(glob.glob("/etc/netplan/*.yaml"))
with tempfile.TemporaryDirectory() as root:
    os.makedirs(os.path.join(root, "etc", "netplan"))
    for f in files:
        shutil.copy(f, os.path.join(root, "etc", "netplan"))
    r = subprocess.run([real, "generate", "--root-dir", root], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"netplan generate: {r.stderr.strip()}")

ethernets = {}
for f in files:
    with open(f, encoding="utf-8") as fd:
        doc = yaml.safe_load(fd) or {}
    for name, conf in ((doc.get("network") or {}).get("ethernets") or {}).items():
        ethernets.setdefault(name, {}).update(conf or {})
for name, conf in sorted(ethernets.items()):
    subprocess.run(["ip", "-4", "addr", "flush", "dev", name], check=True)
    for address in conf.get("addresses", []):
        subprocess.run(["ip", "addr", "add", address, "dev", name], check=True)
    if "mtu" in conf:
        subprocess.run(["ip", "link", "set", name, "mtu", str(conf["mtu"])], check=True)
