#!/usr/bin/env python3
"""Requests json-c would read differently from what they say, sent raw to sparkd's socket.

Usage: hostile_json.py SOCKET. Each must be refused with a JSON-RPC error naming why, the
connection must stay usable, and nothing the request smuggled may have run. Exits 1 naming
every expectation that failed."""
import json
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
pending = b""


def call(line):
    global pending
    s.sendall(line if isinstance(line, bytes) else line.encode())
    while b"\n" not in pending:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("FAIL: connection closed after %r" % line)
        pending += chunk
    raw, _, pending = pending.partition(b"\n")
    try:
        return raw, json.loads(raw)
    except ValueError:  # an answer that is not JSON, or not UTF-8, fails the expectation on it
        return raw, {}


failures = 0


def expect(cond, what):
    """Records a failed expectation and goes on, so one run shows every one that fails."""
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def refused(line, code, words):
    raw, r = call(line)
    err = r.get("error", {})
    expect(err.get("code") == code and words in err.get("message", ""),
           "%r: expected error %d with %r, got %s" % (line, code, words, raw))
    expect(r.get("id") is None, "%r: no id can be echoed from a refused message: %s" % (line, raw))


reloads_before = call('{"jsonrpc":"2.0","method":"status","id":1}\n')[1]["result"]["reloads"]

# Two methods in one request: json-c kept the last, so this ran a reload.
refused('{"jsonrpc":"2.0","method":"version","method":"reload","id":2}\n', -32600, "same key twice")
refused('{"jsonrpc":"2.0","method":"env","params":{"mode":"safe","mode":"dmabuf"},"id":3}\n', -32600,
        "same key twice")
# An escaped NUL: json-c cut "dmabuf\u0000x" to "dmabuf" and "vers\u0000ion" to "vers".
refused('{"jsonrpc":"2.0","method":"env","params":{"mode":"dmabuf\\u0000x"},"id":4}\n', -32600, "NUL")
refused('{"jsonrpc":"2.0","method":"vers\\u0000ion","id":5}\n', -32600, "NUL")
# Ids that cannot come back as sent: bytes that are not UTF-8, an integer past 64 bits.
refused(b'{"jsonrpc":"2.0","method":"version","id":"\xff\xfe"}\n', -32700, "UTF-8")
refused('{"jsonrpc":"2.0","method":"version","id":123456789012345678901234567890}\n', -32600,
        "64 bits")

# What can be echoed is echoed to the byte.
raw, r = call('{"jsonrpc":"2.0","method":"version","id":18446744073709551615}\n')
expect(b'"id":18446744073709551615' in raw, "largest unsigned id not echoed exactly: %s" % raw)
raw, r = call('{"jsonrpc":"2.0","method":"version","id":"café ✓"}\n'.encode())
expect(r.get("id") == "café ✓", "a UTF-8 id not echoed: %s" % raw)

reloads_after = call('{"jsonrpc":"2.0","method":"status","id":9}\n')[1]["result"]["reloads"]
expect(reloads_after == reloads_before, "a refused request ran a reload (%d -> %d)" % (reloads_before, reloads_after))
if failures:
    sys.exit(1)
print("PASS: 6 requests refused, ids echoed exactly, no reload ran")
