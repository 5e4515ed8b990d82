#!/usr/bin/env python3
"""What a keyed peer needs to speak the peer protocol as a node: its own Ed25519 key (the node id
is the first 16 bytes of SHA-256 of the public key, in hex), a hello signed for its TLS session
(peer-pipe gives the session's binding), and summaries whose body text it signs.
As a program: peer_keyed.py id KEY_FILE prints the node id of the key in KEY_FILE (made when
missing), so a test knows the id a helper will speak as."""
import hashlib
import json
import os
import subprocess
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

RAW = serialization.Encoding.Raw


class NodeKey:
    def __init__(self, path=None):
        if path and os.path.exists(path):
            self.priv = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(open(path).read().strip()))
        else:
            self.priv = Ed25519PrivateKey.generate()
            if path:
                raw = self.priv.private_bytes(RAW, serialization.PrivateFormat.Raw,
                                              serialization.NoEncryption())
                with open(path, "w") as f:
                    f.write(raw.hex() + "\n")
        raw = self.priv.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)
        self.pub = raw.hex()
        self.id = hashlib.sha256(raw).digest()[:16].hex()

    def sign(self, data):
        return self.priv.sign(data).hex()


def signed(key, type_, body, age_ms=0):
    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    return {"type": type_, "body": text, "key": key.pub, "sig": key.sign(text.encode()), "age_ms": age_ms}


def section_texts(sections):
    """Each section as the text it travels as, and the digests the body names them by."""
    texts = {n: json.dumps(v, separators=(",", ":")) for n, v in sections.items()}
    return texts, {n: hashlib.sha256(t.encode()).digest()[:16].hex() for n, t in texts.items()}


def summary(key, name, seq, sections, instance="f" * 32, origin=None, fmt=3, extra=None):
    """A summary carrying every section's text; sections that are not an object stand where the
    body's digests go, as a malformed one would send them."""
    texts, digests = section_texts(sections) if isinstance(sections, dict) else ({}, sections)
    body = {"type": "cluster-summary", "format": fmt, "origin": origin or key.id, "name": name,
            "instance": instance, "seq": seq, "uptime_ms": 1000, "digests": digests}
    body.update(extra or {})
    msg = signed(key, "cluster-summary", body)
    msg["sections"] = texts
    return msg


class Peer:
    """A TLS connection to a sparkd through peer-pipe; stdout yields the daemon's lines."""

    def __init__(self, addr, port, key_file):
        self.proc = subprocess.Popen([os.environ["PEER_PIPE_BIN"], addr, str(port), key_file],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("binding "):
            sys.exit("no TLS session with %s:%s" % (addr, port))
        self.binding = line.split()[1]
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def send(self, msg):
        self.stdin.write((json.dumps(msg, separators=(",", ":")) + "\n").encode())
        self.stdin.flush()

    def hello(self, key, name, instance="d" * 32, ports=None):
        text = "sparkd-hello\ndialer\n%s\n%s\n%s\n" % (self.binding, key.id, instance)
        return {"type": "hello", "proto": 3, "node_id": key.id, "instance": instance, "name": name,
                "version": "0", "ports": ports or [], "key": key.pub, "sig": key.sign(text.encode())}

    def close(self):
        self.stdin.close()
        self.proc.wait(timeout=10)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "id":
    print(NodeKey(sys.argv[2]).id)
