#!/usr/bin/env python3
"""Loads sparkd's socket with churn and slow clients and checks that it keeps answering others
with bounded memory and file descriptors, read from /proc/PID.

Usage: api_load.py SOCKET PID. Prints what it measured; exits 0 when every bound holds, 1 with a
message otherwise."""
import os
import socket
import sys
import time

SOCK, PID = sys.argv[1], int(sys.argv[2])
CHURN = 10000
SLOW = 100
PARTIAL_LINE_TIMEOUT = 30  # the daemon's, from daemon/base/api.c
RSS_GROWTH_KIB = 8 * 1024
# A sanitizer build keeps freed memory in quarantine (256 MiB by default), so its RSS measures
# AddressSanitizer, not the daemon: the memory bound is checked in the plain build only.
if os.environ.get("SPARKD_SANITIZED"):
    RSS_GROWTH_KIB = 1 << 30
STATUS = b'{"jsonrpc":"2.0","id":1,"method":"status"}\n'


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def rss_kib():
    for line in open("/proc/%d/status" % PID):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    fail("no VmRSS for pid %d" % PID)


def fds():
    return len(os.listdir("/proc/%d/fd" % PID))


def daemon_connections():
    """The client connections the daemon holds open. A socket it accepted bears the path of its
    listening socket and belongs to the network namespace of the client: this process's."""
    n = 0
    for line in open("/proc/self/net/unix"):
        f = line.split()
        if len(f) == 8 and f[7] == SOCK and f[5] == "03":  # 03: connected
            n += 1
    return n


def wait_connections(at_most, timeout=10):
    """Until the daemon holds at most this many connections, or the timeout: then the bounds
    checked after it say what is wrong."""
    deadline = time.monotonic() + timeout
    while daemon_connections() > at_most and time.monotonic() < deadline:
        time.sleep(0.05)


def connect(timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(SOCK)
    return s


refusals = 0


def status_latency():
    """Seconds until a status call is answered on a fresh connection. A full client table
    refuses with "too many clients"; the caller then tries again, as sparkc's user would."""
    global refusals
    start = time.monotonic()
    while True:
        buf = b""
        with connect() as s:
            try:
                s.sendall(STATUS)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused and closed before the request went out: its answer is readable
            while b"\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    fail("status: connection closed without an answer")
                buf += chunk
        if b'"result"' in buf:
            return time.monotonic() - start
        if b"too many clients" not in buf:
            fail("status: %r" % buf[:200])
        refusals += 1
        if time.monotonic() - start > 5:
            fail("status refused for 5 s: %r" % buf[:200])
        time.sleep(0.05)


for _ in range(20):  # the first calls allocate what the daemon keeps for good
    status_latency()
wait_connections(0)
rss0, fds0 = rss_kib(), fds()
print("baseline: VmRSS %d KiB, %d fds" % (rss0, fds0))

# Half the slow clients send the start of a line once, half trickle a byte at a time: both must
# be cut off PARTIAL_LINE_TIMEOUT after their first byte.
slow = []
for i in range(SLOW):
    s = connect()
    s.sendall(b'{"jsonrpc":"2.0",')
    slow.append(s)
slow_since = time.monotonic()
next_trickle = slow_since + 2
for _ in range(100):  # the daemon accepts them from its backlog
    fds_slow = fds()
    if fds_slow >= fds0 + SLOW:
        break
    time.sleep(0.05)
if fds_slow < fds0 + SLOW:
    fail("%d fds with %d slow clients connected (baseline %d)" % (fds_slow, SLOW, fds0))

worst = 0.0
start = time.monotonic()
for i in range(CHURN):
    s = connect()
    try:
        if i % 3 == 1:
            s.sendall(b'{"jsonrpc":"2.0","id":1,"meth')  # half a line, then gone
        elif i % 3 == 2:
            s.sendall(STATUS)  # a request whose answer nobody reads
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused: the client table was full
    s.close()
    if i % 500 == 0:
        worst = max(worst, status_latency())
    now = time.monotonic()
    if now >= next_trickle:
        for s in slow[SLOW // 2:]:
            s.sendall(b" ")
        next_trickle = now + 2
churn_s = time.monotonic() - start
wait_connections(SLOW)  # the slow clients' only
rss1, fds1 = rss_kib(), fds()
print("after %d connections in %.1f s: VmRSS %d KiB, %d fds (%d slow clients open); "
      "slowest status %.3f s (%d refusals of a full client table on the way)" %
      (CHURN, churn_s, rss1, fds1, SLOW, worst, refusals))
if fds1 > fds0 + SLOW + 5:
    fail("fds grew from %d to %d with %d slow clients open" % (fds0, fds1, SLOW))
if rss1 > rss0 + RSS_GROWTH_KIB:
    fail("VmRSS grew from %d to %d KiB" % (rss0, rss1))
if worst > 2:
    fail("a status call took %.3f s under churn" % worst)

# Keep trickling; every slow client must be closed by the daemon, none later than the limit.
deadline = slow_since + PARTIAL_LINE_TIMEOUT + 10
open_slow = list(slow)
closed_at = []
for s in open_slow:
    s.setblocking(False)
while open_slow and time.monotonic() < deadline:
    now = time.monotonic()
    still = []
    for s in open_slow:
        try:
            data = s.recv(4096)
            if data == b"":
                closed_at.append(now - slow_since)
                s.close()
                continue
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed_at.append(now - slow_since)
            s.close()
            continue
        if now >= next_trickle and s in slow[SLOW // 2:]:
            try:
                s.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                pass
        still.append(s)
    if now >= next_trickle:
        next_trickle = now + 2
    open_slow = still
    time.sleep(0.2)
if open_slow:
    fail("%d of %d slow clients still open %d s after their first byte" %
         (len(open_slow), SLOW, PARTIAL_LINE_TIMEOUT + 10))
print("slow clients closed after %.1f to %.1f s" % (min(closed_at), max(closed_at)))
if min(closed_at) < PARTIAL_LINE_TIMEOUT - 1:
    fail("a slow client was closed after %.1f s, before the limit" % min(closed_at))
wait_connections(0)
status_latency()
wait_connections(0)
rss2, fds2 = rss_kib(), fds()
print("after the slow clients: VmRSS %d KiB, %d fds" % (rss2, fds2))
if fds2 > fds0 + 2:
    fail("fds %d after every client left; baseline %d" % (fds2, fds0))
if rss2 > rss0 + RSS_GROWTH_KIB:
    fail("VmRSS grew from %d to %d KiB" % (rss0, rss2))
