#!/usr/bin/env python3
"""One ICMP echo from a netdev to an address, answered or not within a deadline (the test
machines have no ping). Run inside the sender's namespace.

usage: icmp_echo.py NETDEV ADDRESS [TIMEOUT_SEC]; exit 0 answered, 1 not
"""
import os
import select
import socket
import struct
import sys
import time


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def main():
    netdev, address = sys.argv[1], sys.argv[2]
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    ident = os.getpid() & 0xFFFF
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, netdev.encode())
    header = struct.pack("!BBHHH", 8, 0, 0, ident, 1)
    payload = b"sparkd-topology"
    s.sendto(struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident, 1) + payload, (address, 0))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        packet, source = s.recvfrom(2048)
        ihl = (packet[0] & 0x0F) * 4
        kind, _, _, reply_id, _ = struct.unpack("!BBHHH", packet[ihl:ihl + 8])
        if kind == 0 and reply_id == ident and source[0] == address:
            return 0
    print(f"no echo reply from {address} through {netdev} within {timeout} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
