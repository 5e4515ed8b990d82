#!/usr/bin/env python3
"""Throws junk at a sparkd peer port: random bytes, a truncated TLS ClientHello, and many
connections opened and dropped. Usage: peer_junk.py ADDRESS PORT CONNECTIONS"""
import os
import socket
import sys

addr, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def connect():
    s = socket.create_connection((addr, port), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    return s


s = connect()
s.sendall(os.urandom(4096))
s.close()

# A TLS 1.3 ClientHello record header promising 512 bytes, then only the first few.
s = connect()
s.sendall(bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]) + os.urandom(20))
s.close()

# A line of JSON pretending to be a hello, without TLS.
s = connect()
s.sendall(b'{"type":"hello","proto":1,"node_id":"00000000000000000000000000000000","name":"x"}\n')
s.close()

for _ in range(count):
    connect().close()
print("sent junk and %d connections" % count)
