#!/usr/bin/env python3
"""A peer that holds the cluster key (TLS 1.3 PSK through openssl s_client, as sparkd's peer
channel is) and says hello under NAME, a name with an escape sequence and a newline, then stays
HOLD seconds, heartbeating, and leaves. Prints "closed" as soon as the daemon closes the
connection (it refused the hello), "held" when it kept it open the whole time.
With MODE "replay" the hello is signed for another TLS session (a binding of zeros), as a hello
replayed from another connection would be; with "proto1" it is a hello of the protocol before
node keys, without key or signature.
Usage: peer_hostile_hello.py ADDRESS PORT KEY_FILE NAME HOLD [MODE]"""
import os
import sys
import threading
import time

import peer_keyed

addr, port, key_file, name, hold = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
peer = peer_keyed.Peer(addr, port, key_file)
send = peer.send
tls = peer.proc

mode = sys.argv[6] if len(sys.argv) > 6 else "name"
if mode == "replay":
    peer.binding = "00" * 32
hello = peer.hello(peer_keyed.NodeKey(), name)
if mode == "proto1":
    hello["proto"] = 1
    del hello["key"], hello["sig"]
send(hello)


def read_until_closed():
    for _ in tls.stdout:
        pass
    print("closed", flush=True)
    os._exit(0)


threading.Thread(target=read_until_closed, daemon=True).start()
end = time.monotonic() + hold
try:
    while time.monotonic() < end:
        send({"type": "heartbeat", "ports": []})
        time.sleep(0.3)  # a peer's heartbeat pace, inside the daemon's peer timeout
except BrokenPipeError:
    time.sleep(5)  # the reader says "closed" and ends the process
print("held", flush=True)
tls.stdin.close()
tls.wait(timeout=10)
