#!/usr/bin/env python3
"""A peer that holds the cluster key (TLS 1.3 PSK through openssl s_client, as sparkd's peer
channel is) and sends summaries the cluster view must refuse: oversized, malformed, one claiming
the victim's own node id, and one naming itself unlike its hello; each ROUNDS times. Then one it
passes on for a node of a newer sparkd (format 4, a field and a section this one does not know),
which is believed. Prints the future node's id on its last line.
Usage: peer_hostile_summaries.py ADDRESS PORT KEY_FILE VICTIM_NODE_ID ROUNDS"""
import sys
import threading
import time

import peer_keyed

addr, port, key_file, victim, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
me = peer_keyed.NodeKey()
others = {c: peer_keyed.NodeKey() for c in "abc9"}
peer = peer_keyed.Peer(addr, port, key_file)
send = peer.send
tls = peer.proc


def summary(origin, name, seq, sections):
    # Signed by the key of the node it names where the test has one; the victim's by this peer's
    # own key, which does not name it.
    if origin == victim:
        return peer_keyed.summary(me, name, seq, sections, origin=victim)
    key = me if origin == "me" else others[origin]
    return peer_keyed.summary(key, name, seq, sections)


send(peer.hello(me, "hostile"))
# The daemon's own hello comes back once the handshake and ours are through.
if not tls.stdout.readline():
    sys.exit("no answer from %s:%s" % (addr, port))
# What the daemon sends from now on (summaries it relays, heartbeats) is read and dropped: a full
# pipe would stop s_client before it sees the daemon close the connection.
threading.Thread(target=lambda: [None for _ in tls.stdout], daemon=True).start()
for seq in range(1, rounds + 1):
    # Oversized: under the 64 KiB line of the peer channel, over the summary's limit.
    send(summary("a", "big", seq, {"doctor": {"pad": "x" * (60 * 1024)}}))
    send(summary("b", "junk", seq, ["not", "an", "object"]))
    send(summary("c", "junk", seq, {"Bad Name!": 1}))
    send(summary(victim, "forged", seq, {"doctor": {"verdict": "failed", "checks": []}}))
    send(summary("me", "notmyname", seq, {"doctor": {"verdict": "failed", "checks": []}}))
    send({"type": "heartbeat", "ports": []})
    time.sleep(0.05)  # paces the rounds like a peer would, inside the daemon's peer timeout
future = peer_keyed.summary(others["9"], "future", 1,
                            {"doctor": {"verdict": "ok", "checks": []}, "newsection": {"x": 1}}, fmt=4,
                            extra={"new_field": [1, 2]})
future["new_envelope_field"] = 1
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
print(others["9"].id)
