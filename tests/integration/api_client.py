#!/usr/bin/env python3
"""Speaks raw JSON-RPC lines to sparkd's socket to check how it treats bad and busy clients.

Usage: api_client.py SOCKET SCENARIO. Exits 0 when every expectation of the scenario holds,
1 with a message otherwise."""
import json
import socket
import sys
import threading
import time

SOCK = sys.argv[1]
TIMEOUT = 10


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    s.connect(SOCK)
    return s


def read_line(s, buf=b""):
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("connection closed before a full line; got %r" % buf[:200])
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return json.loads(line), rest


def call(s, line):
    s.sendall(line if isinstance(line, bytes) else line.encode())
    msg, _ = read_line(s)
    return msg


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def error_code(msg):
    return msg.get("error", {}).get("code")


def status_ok():
    s = connect()
    r = call(s, '{"jsonrpc":"2.0","method":"status","id":1}\n')
    s.close()
    return "result" in r and r["result"]["api_version"] == 1


def scenario_malformed():
    s = connect()
    r = call(s, "this is not json\n")
    expect(error_code(r) == -32700 and r["id"] is None, "parse error -32700 with id null: %r" % r)
    r = call(s, '{"jsonrpc":"2.0","method":"status","id":2\n')
    expect(error_code(r) == -32700, "truncated object: %r" % r)
    r = call(s, '{"jsonrpc":"1.0","method":"status","id":3}\n')
    expect(error_code(r) == -32600 and r["id"] == 3, "invalid request keeps the id: %r" % r)
    r = call(s, '[{"jsonrpc":"2.0","method":"status","id":4}]\n')
    expect(error_code(r) == -32600, "batch: %r" % r)
    r = call(s, '{"jsonrpc":"2.0","method":"no_such_method","id":5}\n')
    expect(error_code(r) == -32601 and "no_such_method" in r["error"]["message"], "unknown method: %r" % r)
    r = call(s, '{"jsonrpc":"2.0","method":"status","params":{"x":1},"id":6}\n')
    expect(error_code(r) == -32602, "wrong params for status: %r" % r)
    r = call(s, '{"jsonrpc":"2.0","method":"subscribe","params":{"events":"all"},"id":7}\n')
    expect(error_code(r) == -32602, "wrong params for subscribe: %r" % r)
    r = call(s, '{"jsonrpc":"2.0","method":"subscribe","params":{"events":["nope"]},"id":8}\n')
    expect(error_code(r) == -32602, "unknown event type: %r" % r)
    r = call(s, b'\xff\xfe\x00garbage\n')
    expect(error_code(r) == -32700, "binary garbage: %r" % r)
    # Same connection still answers after all of that.
    r = call(s, '{"jsonrpc":"2.0","method":"version","id":"last"}\n')
    expect(r.get("id") == "last" and r["result"]["version"], "connection still usable: %r" % r)
    # Two requests in one write, answered in order.
    s.sendall(b'{"jsonrpc":"2.0","method":"version","id":10}\n{"jsonrpc":"2.0","method":"version","id":11}\n')
    a, rest = read_line(s)
    b, _ = read_line(s, rest)
    expect(a["id"] == 10 and b["id"] == 11, "pipelined requests: %r %r" % (a, b))
    s.close()


def scenario_oversize():
    s = connect()
    big = b'{"jsonrpc":"2.0","method":"status","id":1,"params":{"pad":"' + b"x" * (1 << 20) + b'"}}\n'
    try:
        s.sendall(big)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the daemon may close before reading it all
    r, _ = read_line(s)
    expect(error_code(r) == -32600 and "65536" in r["error"]["message"], "oversize refused: %r" % r)
    s.close()
    # Just under the limit is still a request (answered with invalid params, not refused).
    s = connect()
    pad = "x" * (65536 - 100)
    r = call(s, '{"jsonrpc":"2.0","method":"status","id":1,"params":{"pad":"%s"}}\n' % pad)
    expect(error_code(r) == -32602, "request under 64 KiB parsed: %r" % r)
    s.close()
    expect(status_ok(), "daemon serving after a 1 MiB request")


def scenario_disconnects():
    for n in range(50):
        s = connect()
        s.sendall(b'{"jsonrpc":"2.0","method":"sta')
        s.close()
    for n in range(20):
        s = connect()
        s.sendall(b'{"jsonrpc":"2.0","method":"status","id":1}\n')
        s.close()  # gone before the answer
    s = connect()
    s.sendall(b'{"jsonrpc":"2.0","method":"status","id":1}')
    s.shutdown(socket.SHUT_WR)  # half-close: the last line has no newline
    r, _ = read_line(s)
    expect(r.get("id") == 1 and "result" in r, "half-closed client answered: %r" % r)
    s.close()
    expect(status_ok(), "daemon serving after clients vanished mid-request")


def scenario_concurrent():
    n = 200
    socks = [connect() for _ in range(n)]
    results = [None] * n

    def worker(i):
        try:
            r = call(socks[i], '{"jsonrpc":"2.0","method":"status","id":%d}\n' % i)
            results[i] = r.get("id") == i and "result" in r
        except Exception as e:  # noqa: BLE001 - any failure is a failed client
            results[i] = repr(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [(i, r) for i, r in enumerate(results) if r is not True]
    expect(not bad, "%d of %d concurrent clients failed: %r" % (len(bad), n, bad[:3]))
    for s in socks:
        s.close()
    expect(status_ok(), "daemon serving after 200 concurrent clients")


def scenario_max_clients():
    # The daemon is started with max_clients = 5 for this scenario.
    held = [connect() for _ in range(5)]
    for s in held:  # make sure all five are accepted before the sixth comes
        call(s, '{"jsonrpc":"2.0","method":"version","id":1}\n')
    extra = connect()
    r, _ = read_line(extra)
    expect(error_code(r) == -32003 and "too many" in r["error"]["message"], "sixth client refused: %r" % r)
    extra.close()
    held.pop().close()
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            if status_ok():
                break
        except (EOFError, KeyError):
            time.sleep(0.05)
    else:
        expect(False, "a slot did not free up after a client left")
    for s in held:
        s.close()


def scenario_subscribe():
    sub = connect()
    r = call(sub, '{"jsonrpc":"2.0","method":"subscribe","params":{"events":["config-reloaded"]},"id":1}\n')
    expect(r["result"]["events"] == ["config-reloaded"], "subscribe result: %r" % r)
    other = connect()
    r = call(other, '{"jsonrpc":"2.0","method":"reload","id":2}\n')
    expect("result" in r, "reload as root: %r" % r)
    ev, _ = read_line(sub)
    expect(ev.get("method") == "event" and ev["params"]["event"] == "config-reloaded", "event: %r" % ev)
    expect(ev["params"]["fields"]["config"], "event fields: %r" % ev)
    sub.close()
    other.close()


def request(s, method, params=None, id=1):
    msg = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        msg["params"] = params
    return call(s, json.dumps(msg) + "\n")


def expect_invalid_params(s, method, params, *words):
    r = request(s, method, params)
    message = r.get("error", {}).get("message", "")
    expect(error_code(r) == -32602, "%s %r refused with -32602: %r" % (method, params, r))
    for w in words:
        expect(w in message, "%s %r: the message names %r: %r" % (method, params, w, message))


def scenario_params():
    s = connect()
    # Every result carries the API's version, whichever method gave it.
    for method in ("status", "version", "links", "peers", "metrics", "fabric", "env", "doctor", "history",
                   "probe-kinds", "reload"):
        r = request(s, method)
        expect(r.get("result", {}).get("api_version") == 1, "%s result with api_version 1: %r" % (method, r))
    # An empty object or array is no params at all.
    for params in ({}, []):
        r = request(s, "probe-kinds", params)
        expect("result" in r, "probe-kinds with %r: %r" % (params, r))
    expect_invalid_params(s, "probe-kinds", {"kind": "rtt"}, '"kind"', "no parameters")
    expect_invalid_params(s, "status", [1], "must be an object")
    expect_invalid_params(s, "history", ["b"], "history", "must be an object")
    expect_invalid_params(s, "history", {"kind": "nosuch"}, '"kind"', "rtt", '"nosuch"')
    expect_invalid_params(s, "history", {"limit": "ten"}, '"limit"', "an integer")
    expect_invalid_params(s, "history", {"limit": 100001}, '"limit"', "100000")
    expect_invalid_params(s, "history", {"peer": "b", "since": 1}, '"since"', "peer, kind, limit")
    r = request(s, "history", {"peer": "b", "kind": "tcp", "limit": 0})
    expect(r.get("result", {}).get("results") == [], "history of a known kind: %r" % r)
    expect_invalid_params(s, "env", {"mode": "fast"}, '"mode"', "auto, safe, dmabuf")
    expect_invalid_params(s, "subscribe", {"events": ["nope"]}, '"events"', "link-down")
    expect_invalid_params(s, "probe-cancel", None, '"id"', "missing")
    expect_invalid_params(s, "probe-cancel", {"id": 7}, '"id"', "a string")
    expect_invalid_params(s, "probe", {"kind": "tcp"}, '"peer"', "missing")
    expect_invalid_params(s, "probe", {"peer": "b", "kind": "nosuch"}, '"kind"', "rtt")
    s.close()


def scenario_env_check_bounds():
    """env-check refuses what is past its bounds, and any member naming a path to read."""
    s = connect()
    expect_invalid_params(s, "env-check", {"environ": {"NCCL_X%d" % i: "1" for i in range(257)}},
                          "more than 256 variables")
    expect_invalid_params(s, "env-check", {"environ": {"NCCL_IB_HCA": "x" * 5000}}, "a value 4096")
    expect_invalid_params(s, "env-check", {"nccl_conf": {"path": "/home/u/.nccl.conf", "text": "#" * 17000}},
                          "at most 16384 bytes")
    expect_invalid_params(s, "env-check", {"memlock": {"soft": -5, "hard": -1}}, "expected bytes, or -1")
    expect_invalid_params(s, "env-check", {"home": "/root"}, '"home"')
    r = request(s, "env-check", {"environ": {"NCCL_DEBUG": "INFO"}})
    expect(r.get("result", {}).get("status") in ("ok", "warn", "fail"), "a request within bounds: %r" % r)
    s.close()


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}

if __name__ == "__main__":
    SCENARIOS[sys.argv[2]]()
    print("ok", sys.argv[2])
