#!/usr/bin/env python3
"""A host on the wire without the cluster key: sends raw LLDP frames (AF_PACKET) twice a second,
for SECONDS or until killed: out of ODD_IFACE one whose System Name is not UTF-8 and holds an
escape sequence and a newline, out of LONG_IFACE one whose System Name is a legal 200 bytes.
lldpd keeps the bytes as they came. Usage: lldp_frames.py ODD_IFACE LONG_IFACE SECONDS"""
import socket
import struct
import sys
import time

odd_iface, long_iface, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])


def tlv(kind, value):
    return struct.pack("!H", kind << 9 | len(value)) + value


def frame(mac, sysname, descr):
    body = (tlv(1, b"\x04" + mac) +          # chassis id: a MAC address
            tlv(2, b"\x05" + b"e0") +        # port id: an interface name
            tlv(3, struct.pack("!H", 120)) + # time to live
            tlv(4, descr) +                  # port description
            tlv(5, sysname) +                # system name
            tlv(0, b""))
    return b"\x01\x80\xc2\x00\x00\x0e" + mac + b"\x88\xcc" + body


sends = []
for iface, f in ((odd_iface, frame(b"\x02\x00\x00\x00\x00\x66", b"evil\xe9\xff\x1b[31m\nerr: fake",
                                   b"port \xc3\x28 \x1b]0;title\x07")),
                 (long_iface, frame(b"\x02\x00\x00\x00\x00\x67", b"L" * 200, b"d" * 255))):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sends.append((s, f))
end = time.monotonic() + seconds
while time.monotonic() < end:
    for s, f in sends:
        s.send(f)
    time.sleep(0.5)  # LLDP's own pace is seconds; lldpd keeps a neighbour for the frame's TTL
