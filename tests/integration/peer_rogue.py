#!/usr/bin/env python3
"""A compromised keyed node: it holds the cluster key (TLS 1.3 PSK through peer-pipe, as sparkd's
peer channel is) and its own node key (NODE_KEY_FILE, made when missing: peer_keyed.py id gives
its id), and says what it likes: a hello and a summary under its id and NAME, then, with INVENT,
that many nodes nobody else knows, each with a fresh key of its own, a section of PAD bytes and,
with NCCL, a software section of an NCCL version in a build of its own; the invented nodes
are kept fresh with alives of their own. With ALTER (a node id), each summary of that node the
daemon sends it is passed back altered (a section changed, its signature kept), 10 times. It
stays up for SECONDS, beating and saying its summary again each second, then goes.
Usage: peer_rogue.py ADDRESS PORT KEY_FILE NODE_KEY_FILE NAME SECONDS [INVENT PAD [NCCL [ALTER]]]"""
import json
import sys
import threading
import time

import peer_keyed

addr, port, key_file, node_key_file, name, seconds = sys.argv[1:7]
invent = int(sys.argv[7]) if len(sys.argv) > 7 else 0
pad = int(sys.argv[8]) if len(sys.argv) > 8 else 0
nccl = sys.argv[9] if len(sys.argv) > 9 and sys.argv[9] != "-" else None
alter = sys.argv[10] if len(sys.argv) > 10 else None
altered = []
queued = []
lock = threading.Lock()
me = peer_keyed.NodeKey(node_key_file)
peer = peer_keyed.Peer(addr, port, key_file)
send = peer.send
tls = peer.proc


def SOFTWARE_OF(i):
    # An NCCL of the version given in a build nobody else has: a consistency finding, if counted.
    return {"sparkd": "0", "kernel": "6.8.0", "driver": "580.0", "firmware": [],
            "nccl": [{"path": "/usr/lib/libnccl.so.2", "origin": "system", "version": nccl,
                      "build_id": "%040x" % (0xbad0000 + i)}]}


def summary(key, node_name, seq, sections):
    return peer_keyed.summary(key, node_name, seq, sections, instance=key.id[::-1])


send(peer.hello(me, name))
if not tls.stdout.readline():
    sys.exit("no answer from %s:%s" % (addr, port))


def read_all():
    # What the daemon sends is read (a full pipe would stop peer-pipe); ALTER's summaries kept,
    # asked for when the daemon offers one.
    for line in tls.stdout:
        if not alter:
            continue
        if b'"cluster-offer"' in line and alter.encode() in line:
            send({"type": "cluster-want", "origin": alter})
            continue
        if b'"cluster-summary"' not in line:
            continue
        m = json.loads(line)
        if json.loads(m["body"])["origin"] != alter or "doctor" not in m.get("sections", {}):
            continue
        # A section's text changed, its digest and the body's signature kept.
        m["sections"]["doctor"] = m["sections"]["doctor"].replace('"verdict":"', '"verdict":"forged-', 1)
        with lock:
            if not queued:
                altered.extend([m] * 10)
                queued.append(1)


threading.Thread(target=read_all, daemon=True).start()
own = {"doctor": {"verdict": "ok", "checks": []}}
send(summary(me, name, 1, own))
ghosts = []
for i in range(invent):
    sections = {"pad": {"x": "x" * pad}}
    if nccl:
        sections["software"] = SOFTWARE_OF(i)
    ghosts.append(peer_keyed.NodeKey())
    send(summary(ghosts[-1], "ghost-%d" % i, 1, sections))
    if i % 16 == 15:
        send({"type": "heartbeat", "ports": []})
n_altered = 0
end = time.monotonic() + float(seconds)
seq = 1
while time.monotonic() < end:
    seq += 1
    send({"type": "heartbeat", "ports": []})
    send(summary(me, name, seq, own))
    if seq % 4 == 0:
        for i, g in enumerate(ghosts):
            send(peer_keyed.signed(g, "cluster-alive", {
                "type": "cluster-alive", "format": 3, "origin": g.id, "name": "ghost-%d" % i,
                "instance": g.id[::-1], "seq": 1, "uptime_ms": 1000 + 250 * seq}))
    with lock:
        while altered:
            send(altered.pop())
            n_altered += 1
            if n_altered == 10:
                print("altered 10", flush=True)
    time.sleep(0.25)
tls.stdin.close()
tls.wait(timeout=10)
print("said %d summaries of its own and %d invented nodes" % (seq, invent))
