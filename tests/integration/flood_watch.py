#!/usr/bin/env python3
"""Watches a sparkd while a peer floods it: every 20 ms one status request on a new connection to
its API (timed, as sparkc would make it), its resident memory, its open files and its child
processes, until STOP_FILE exists. Prints the highest of each and the request times as JSON.
Usage: flood_watch.py SOCKET PID STOP_FILE"""
import json
import os
import socket
import sys
import time

sock, pid, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def rss_kib():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children():
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return len(f.read().split())
    except OSError:
        return 0


def status_ms():
    start = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(sock)
        s.sendall(b'{"jsonrpc":"2.0","method":"status","id":1}\n')
        buf = b""
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                return None
            buf += chunk
    except OSError:
        return None
    finally:
        s.close()
    return (time.monotonic() - start) * 1000


times, failed, top = [], 0, {"rss_kib": 0, "fds": 0, "children": 0}
while not os.path.exists(stop):
    t = status_ms()
    if t is None:
        failed += 1
    else:
        times.append(t)
    try:
        top["rss_kib"] = max(top["rss_kib"], rss_kib())
        top["fds"] = max(top["fds"], len(os.listdir("/proc/%d/fd" % pid)))
    except OSError:
        sys.exit("sparkd %d is gone" % pid)
    top["children"] = max(top["children"], children())
    time.sleep(0.02)
times.sort()
top.update(requests=len(times), failed=failed,
           p50_ms=round(times[len(times) // 2], 1) if times else None,
           p99_ms=round(times[min(len(times) - 1, len(times) * 99 // 100)], 1) if times else None,
           max_ms=round(times[-1], 1) if times else None)
print(json.dumps(top))
