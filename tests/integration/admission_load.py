#!/usr/bin/env python3
"""Makes load on sparkd's socket for the admission test, as whichever user runs it.

  admission_load.py hold SOCKET N REPORT  opens N connections, asks each for "version" (so the
      daemon has admitted or refused it), writes "ACCEPTED REFUSED FIRST_REFUSAL" to REPORT and
      keeps the accepted ones open, idle, until its stdin closes.
  admission_load.py call SOCKET METHOD [PARAMS]  one request on a fresh connection: prints the
      milliseconds to its answer and the answer; exits 1 on "too many clients", a permission
      refusal, no answer, or an answer slower than 100 ms.
  admission_load.py burst SOCKET N  N clients connect, send half a line and close; then one more
      client's status must be answered at once (exit 1 otherwise)."""
import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_client  # noqa: E402 (found next to this file)

LATENCY_LIMIT_MS = 100


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def read_line(s):
    """The first line as JSON, or None when the daemon closed without one."""
    try:
        return api_client.read_line(s)[0]
    except EOFError:
        return None


def hold(path, n, report):
    accepted, refusals = [], []
    for i in range(n):
        s = connect(path)
        try:
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"version"}\n')
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed already: the refusal waits to be read
        r = read_line(s)
        if r and "result" in r:
            accepted.append(s)
        else:
            refusals.append(r["error"]["message"] if r and "error" in r else "no answer")
            s.close()
    with open(report + ".tmp", "w") as f:
        f.write("%d %d %s\n" % (len(accepted), len(refusals), refusals[0] if refusals else "-"))
    # Renamed into place: the test waits for the file and must never read half of it.
    os.rename(report + ".tmp", report)
    sys.stdin.read()
    for s in accepted:
        s.close()


def call(path, method, params=None):
    req = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params:
        req["params"] = json.loads(params)
    start = time.monotonic()
    with connect(path) as s:
        try:
            s.sendall(json.dumps(req).encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed already: the refusal waits to be read
        r = read_line(s)
    ms = (time.monotonic() - start) * 1000
    print("%s answered in %.1f ms: %s" % (method, ms, json.dumps(r)[:200]))
    if r is None:
        return 1
    if "error" in r and r["error"]["code"] in (-32003, -32001):
        return 1
    return 0 if ms < LATENCY_LIMIT_MS else 1


def burst(path, n):
    start = time.monotonic()
    for i in range(n):
        s = connect(path)
        try:
            s.sendall(b'{"jsonrpc":"2.0","id":1,"me')
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused at once: it counts as part of the burst all the same
        s.close()
    print("%d clients connected, sent half a line and closed in %.2f s" % (n, time.monotonic() - start))
    return call(path, "status")


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "hold":
        hold(path, int(sys.argv[3]), sys.argv[4])
        return 0
    if cmd == "call":
        return call(path, sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    if cmd == "burst":
        return burst(path, int(sys.argv[3]))
    print("unknown command " + cmd)
    return 2


sys.exit(main())
