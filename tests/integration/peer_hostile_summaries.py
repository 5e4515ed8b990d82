#!/usr/bin/env python3
"""A peer that holds the cluster key (TLS 1.3 PSK through openssl s_client, as sparkd's peer
channel is) and sends summaries the cluster view must refuse: oversized, malformed, one claiming
the victim's own node id, and one naming itself unlike its hello; each ROUNDS times. Then one it
passes on for a node of a newer sparkd (format 2, a field and a section this one does not know),
which is believed.
Usage: peer_hostile_summaries.py ADDRESS PORT KEY_FILE VICTIM_NODE_ID ROUNDS"""
import json
import os
import subprocess
import sys
import threading
import time

addr, port, key_file, victim, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
key = open(key_file).read().strip()
me = "e" * 32

tls = subprocess.Popen(
    ["openssl", "s_client", "-quiet", "-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256",
     "-psk_identity", "sparkd-cluster-v1", "-psk", key, "-connect", "%s:%s" % (addr, port)],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send(msg):
    tls.stdin.write((json.dumps(msg, separators=(",", ":")) + "\n").encode())
    tls.stdin.flush()


def summary(origin, name, seq, sections):
    return {"type": "cluster-summary", "format": 1, "origin": origin, "name": name,
            "instance": "f" * 32, "seq": seq, "age_ms": 0, "uptime_ms": 1000, "sections": sections}


send({"type": "hello", "proto": 1, "node_id": me, "instance": "d" * 32, "name": "hostile",
      "version": "0", "ports": []})
# The daemon's own hello comes back once the handshake and ours are through.
if not tls.stdout.readline():
    sys.exit("no answer from %s:%s" % (addr, port))
# What the daemon sends from now on (summaries it relays, heartbeats) is read and dropped: a full
# pipe would stop s_client before it sees the daemon close the connection.
threading.Thread(target=lambda: [None for _ in tls.stdout], daemon=True).start()
for seq in range(1, rounds + 1):
    # Oversized: under the 64 KiB line of the peer channel, over the summary's limit.
    send(summary("a" * 32, "big", seq, {"doctor": {"pad": "x" * (60 * 1024)}}))
    send(summary("b" * 32, "junk", seq, ["not", "an", "object"]))
    send(summary("c" * 32, "junk", seq, {"Bad Name!": 1}))
    send(summary(victim, "forged", seq, {"doctor": {"verdict": "failed", "checks": []}}))
    send(summary(me, "notmyname", seq, {"doctor": {"verdict": "failed", "checks": []}}))
    send({"type": "heartbeat", "ports": []})
    time.sleep(0.05)  # paces the rounds like a peer would, inside the daemon's peer timeout
future = summary("9" * 32, "future", 1, {"doctor": {"verdict": "ok", "checks": []},
                                          "newsection": {"x": 1}})
future["format"] = 2
future["new_field"] = [1, 2]
send(future)
send({"type": "heartbeat", "ports": []})
tls.stdin.close()
# s_client -quiet waits for the daemon to close, which it does not for a peer whose host still
# acknowledges (it is slow, not gone): what was sent is in by now.
try:
    tls.wait(timeout=3)
except subprocess.TimeoutExpired:
    tls.terminate()
    tls.wait(timeout=10)
print("sent %d rounds of refused summaries" % rounds)
