#!/usr/bin/env python3
"""Runs inside the benchmark's namespace: sets the MTU of IFACE to 1500 TRIES times and measures,
from just before the `ip` command, when the kernel's own link notification arrives (a plain
rtnetlink listener: the floor any daemon can reach), when the MTU is back at WANT, and when
sparkd's mtu-corrected event arrives on its API socket (sparkd writes the journal entry in the
same call, just before it publishes the event). Prints one JSON object."""
import json
import socket
import subprocess
import sys
import time

sock_path, iface, want, tries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

events = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
events.connect(sock_path)
events.sendall(b'{"jsonrpc":"2.0","method":"subscribe","params":{"events":["mtu-corrected"]},"id":1}\n')
buf = b""
while b"\n" not in buf:
    buf += events.recv(4096)
buf = buf.split(b"\n", 1)[1]

RTMGRP_LINK = 1
nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
nl.bind((0, RTMGRP_LINK))
nl.setblocking(False)

mtu_file = "/sys/class/net/%s/mtu" % iface
results = {"ip": [], "kernel": [], "restored": [], "event": []}
for _ in range(tries):
    while True:  # drain what is left from the last round
        try:
            nl.recv(65536)
        except BlockingIOError:
            break
    t0 = time.monotonic()
    subprocess.run(["ip", "link", "set", iface, "mtu", "1500"], check=True)
    results["ip"].append(time.monotonic() - t0)
    nl.setblocking(True)
    nl.settimeout(2)
    nl.recv(65536)
    results["kernel"].append(time.monotonic() - t0)
    nl.setblocking(False)
    deadline = t0 + 2
    while int(open(mtu_file).read()) != want:
        if time.monotonic() > deadline:
            sys.exit("MTU not restored within 2 s")
    results["restored"].append(time.monotonic() - t0)
    events.settimeout(2)
    while b"\n" not in buf:
        buf += events.recv(4096)
    line, buf = buf.split(b"\n", 1)
    assert json.loads(line)["params"]["event"] == "mtu-corrected"
    results["event"].append(time.monotonic() - t0)
    time.sleep(0.05)
print(json.dumps(results))
