#!/usr/bin/env python3
"""A peer that holds the cluster key (TLS 1.3 PSK through openssl s_client, as sparkd's peer
channel is) and says what it likes: a hello and a summary under NODE_ID and NAME, then, with
INVENT, that many nodes nobody else knows, each with a section of PAD bytes. It stays up for
SECONDS, beating and saying its summary again each second, then goes.
Usage: peer_rogue.py ADDRESS PORT KEY_FILE NODE_ID NAME SECONDS [INVENT PAD]"""
import json
import subprocess
import sys
import threading
import time

addr, port, key_file, me, name, seconds = sys.argv[1:7]
invent = int(sys.argv[7]) if len(sys.argv) > 7 else 0
pad = int(sys.argv[8]) if len(sys.argv) > 8 else 0
key = open(key_file).read().strip()

tls = subprocess.Popen(
    ["openssl", "s_client", "-quiet", "-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256",
     "-psk_identity", "sparkd-cluster-v1", "-psk", key, "-connect", "%s:%s" % (addr, port)],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send(msg):
    tls.stdin.write((json.dumps(msg, separators=(",", ":")) + "\n").encode())
    tls.stdin.flush()


def summary(origin, node_name, seq, sections):
    return {"type": "cluster-summary", "format": 1, "origin": origin, "name": node_name,
            "instance": origin[::-1], "seq": seq, "age_ms": 0, "uptime_ms": 1000, "sections": sections}


send({"type": "hello", "proto": 1, "node_id": me, "instance": "d" * 32, "name": name,
      "version": "0", "ports": []})
if not tls.stdout.readline():
    sys.exit("no answer from %s:%s" % (addr, port))
# What the daemon sends from now on is read and dropped: a full pipe would stop s_client.
threading.Thread(target=lambda: [None for _ in tls.stdout], daemon=True).start()
own = {"doctor": {"verdict": "ok", "checks": []}}
send(summary(me, name, 1, own))
for i in range(invent):
    send(summary("1%031x" % i, "ghost-%d" % i, 1, {"pad": {"x": "x" * pad}}))
    if i % 16 == 15:
        send({"type": "heartbeat", "ports": []})
end = time.monotonic() + float(seconds)
seq = 1
while time.monotonic() < end:
    seq += 1
    send({"type": "heartbeat", "ports": []})
    send(summary(me, name, seq, own))
    time.sleep(0.25)
tls.stdin.close()
tls.wait(timeout=10)
print("said %d summaries of its own and %d invented nodes" % (seq, invent))
