#!/usr/bin/env python3
"""Stands in for systemd's notification socket: receives sd_notify datagrams on SOCKET and writes
each one, newlines turned into spaces, as a line of OUTFILE. Runs until killed."""
import os
import socket
import sys

path, outfile = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
with open(outfile, "a", buffering=1) as out:
    out.write("LISTENING\n")
    while True:
        data = s.recv(4096)
        out.write(data.decode(errors="replace").replace("\n", " ").strip() + "\n")
