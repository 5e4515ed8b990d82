#!/usr/bin/env python3
"""Talks to many sparkd sockets at once for bench_cluster32.sh, one JSON-RPC request a connection
as sparkc makes it.

  cluster_api.py converge START_NS TIMEOUT_S NODES SOCKET...
      polls every socket's `peers` (and `cluster` where the daemon has it) until each shows all
      NODES nodes up; prints per method the seconds from START_NS (CLOCK_REALTIME, ns) until
      the last node's view was complete, or "timeout" with the nodes still short.
  cluster_api.py latency COUNT METHOD SOCKET [CPU_PID NETNS...]
      COUNT calls of METHOD, each given 60 s; prints p50, p99 and the slowest in ms, then the
      same timed until the reply was parsed. With CPU_PID and NETNS: the calls are made while
      every process in those namespaces is stopped (SIGSTOP), in windows of STOPPED_S with
      RESUMED_S between them, so that no stop outlasts the peers' heartbeat timeout (6 s):
      a longer one would measure the node marking its peers down, not the API; the CPU time
      CPU_PID spent during the windows, per call in ms, is printed last.
  cluster_api.py handshakes SOCKET...
      the sum of every socket's `peers` handshakes (TLS handshakes of the peer channel begun).
  cluster_api.py call METHOD PARAMS_JSON SOCKET
      one call, given 60 s; prints its result as JSON.
  cluster_api.py has METHOD SOCKET
      exit status 0 when the daemon knows METHOD.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

METHOD_NOT_FOUND = -32601
STOPPED_S = 1.5
RESUMED_S = 2.0


def call_text(path, method, timeout=10.0, params=None):
    """The reply's text, as bytes."""
    request = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params:
        request["params"] = params
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(json.dumps(request).encode() + b"\n")
        chunks = []
        while not chunks or not chunks[-1].endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def result_of(method, text):
    reply = json.loads(text)
    if "error" in reply:
        raise RuntimeError("%s: %s" % (method, reply["error"]))
    return reply["result"]


def call(path, method, timeout=10.0, params=None):
    return result_of(method, call_text(path, method, timeout, params))


def has_method(path, method):
    try:
        call(path, method)
        return True
    except RuntimeError as e:
        if str(METHOD_NOT_FOUND) in str(e):
            return False
        raise


def peers_up(result):
    return len({p["node_id"] for p in result["peers"] if p["state"] == "up" and p["node_id"]}) + 1


def cluster_up(result):
    """Nodes of the cluster view that are not stale, this one included."""
    nodes = result["nodes"] if isinstance(result, dict) else result
    return sum(1 for n in nodes if not n.get("is_stale", n.get("stale", False)))


def converge(start_ns, timeout_s, nodes, sockets):
    methods = {"peers": peers_up}
    if has_method(sockets[0], "cluster"):
        methods["cluster"] = cluster_up
    for method, count in methods.items():
        missing = set(sockets)
        seen = {}
        deadline = time.time() + timeout_s
        while missing and time.time() < deadline:
            for path in sorted(missing):
                try:
                    n = count(call(path, method))
                except (OSError, ValueError, KeyError) as e:
                    n = -1
                    seen[path] = str(e)
                else:
                    seen[path] = n
                if n >= nodes:
                    missing.discard(path)
            if missing:
                time.sleep(0.05)
        if missing:
            short = ", ".join("%s: %s" % (p.rsplit("/", 1)[-1], seen.get(p)) for p in sorted(missing))
            print("%s timeout %s" % (method, short))
        else:
            print("%s %.2f" % (method, (time.time_ns() - start_ns) / 1e9))


def cpu_seconds(pid):
    """user + system time of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def signal_netns(names, sig):
    """Sends sig to every process in the namespaces (listed anew: helpers come and go)."""
    for name in names:
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout
        for pid in pids.split():
            try:
                os.kill(int(pid), sig)
            except ProcessLookupError:
                pass


def latency(count, method, path, cpu_pid=None, netns=()):
    """p50 p99 max in ms to the reply's last byte, then the same with this client's parse, then
    (with cpu_pid) cpu_pid's CPU ms a call."""
    times, parsed, cpu = [], [], 0.0
    while len(times) < count:
        if netns:
            signal_netns(netns, signal.SIGSTOP)
            cpu -= cpu_seconds(cpu_pid)
        window_end = time.monotonic() + STOPPED_S
        while len(times) < count and (not netns or time.monotonic() < window_end):
            t = time.perf_counter()
            text = call_text(path, method, timeout=60.0)
            times.append((time.perf_counter() - t) * 1000)
            result_of(method, text)
            parsed.append((time.perf_counter() - t) * 1000)
        if netns:
            cpu += cpu_seconds(cpu_pid)
            signal_netns(netns, signal.SIGCONT)
            if len(times) < count:
                time.sleep(RESUMED_S)
    row = []
    for v in (times, parsed):
        v.sort()
        row += [v[len(v) // 2], v[min(len(v) - 1, (len(v) * 99) // 100)], v[-1]]
    if netns:
        row.append(cpu * 1000 / count)
    print(" ".join("%.2f" % x for x in row))


def main():
    what = sys.argv[1]
    if what == "converge":
        converge(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
    elif what == "latency":
        pid = int(sys.argv[5]) if len(sys.argv) > 5 else None
        latency(int(sys.argv[2]), sys.argv[3], sys.argv[4], pid, sys.argv[6:])
    elif what == "handshakes":
        print(sum(call(path, "peers", timeout=60.0)["handshakes"] for path in sys.argv[2:]))
    elif what == "call":
        print(json.dumps(call(sys.argv[4], sys.argv[2], timeout=60.0, params=json.loads(sys.argv[3]))))
    elif what == "has":
        sys.exit(0 if has_method(sys.argv[3], sys.argv[2]) else 1)
    else:
        sys.exit("unknown command " + what)


if __name__ == "__main__":
    main()
