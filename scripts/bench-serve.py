#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The control server of `make bench`, run by scripts/bench-guest.sh in the
# server guest.  The client guest drives every measurement; for each one it
# asks this server to start the server side of a tool, waits until that
# listens, runs its own side, then asks for the exit status.  One client, a
# line per request and a line per reply, over TCP on the benchmark link:
#
#   start ID tcp|udp PORT TIMEOUT CMD...  start CMD (bash -c) with its
#                                         output in RAW/ID.server.txt, and
#                                         reply "ok" once something listens
#                                         on PORT, "err WHY" if it exits or
#                                         30 s pass first
#   wait ID SECS                          wait SECS at most for ID to end
#                                         (then kill it): "done RC BUSY",
#                                         BUSY the guest's non-idle CPU
#                                         time in USER_HZ ticks meanwhile
#   run CMD...                            run CMD (bash -c, 60 s at most):
#                                         "done RC"; output to the log
#   quit                                  "bye", and exit
#
#   bench-serve.py ADDR PORT RAW

import os
import signal
import socket
import subprocess
import sys
import time

READY_S = 30
CLIENT_WAIT_S = 300
IDLE_S = 900


def log(msg):
    print("bench-serve: " + msg, flush=True)


def busy_ticks():
    """Non-idle CPU time of the whole guest, all CPUs, in USER_HZ ticks."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: count all but idle
    # and iowait.
    return sum(v[:8]) - v[3] - v[4]


def listening(proto, port):
    """Whether a local socket listens on (tcp) or is bound to (udp) PORT."""
    want = "%04X" % port
    for name in (proto, proto + "6"):
        try:
            with open("/proc/net/" + name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    lport = fields[1].rsplit(":", 1)[1]
                    # TCP_LISTEN is 0A; a bound UDP socket is 07 (CLOSE).
                    if lport == want and (proto == "udp" or fields[3] == "0A"):
                        return True
        except FileNotFoundError:
            pass
    return False


def kill_group(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(3)
            return
        except subprocess.TimeoutExpired:
            pass


class Server:
    def __init__(self, raw):
        self.raw = raw
        self.procs = {}

    def start(self, args):
        ident, proto, port, timeout_s, cmd = args.split(" ", 4)
        path = os.path.join(self.raw, ident + ".server.txt")
        log("start %s: %s" % (ident, cmd))
        out = open(path, "w")
        out.write("+ %s\n" % cmd)
        out.flush()
        # Its own process group, so that a kill reaches the tool and not
        # just the shell and timeout around it.
        p = subprocess.Popen(["timeout", "-k", "5", timeout_s, "bash", "-c", cmd],
                             stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        self.procs[ident] = (p, busy_ticks())
        deadline = time.monotonic() + READY_S
        while not listening(proto, int(port)):
            if p.poll() is not None:
                return "err exited %d before listening" % p.returncode
            if time.monotonic() > deadline:
                kill_group(p)
                return "err not listening after %ds" % READY_S
            time.sleep(0.05)
        return "ok"

    def wait(self, args):
        ident, secs = args.split()
        if ident not in self.procs:
            return "err no such measurement"
        p, busy0 = self.procs.pop(ident)
        try:
            rc = p.wait(float(secs))
        except subprocess.TimeoutExpired:
            log("%s still running after %ss: killed" % (ident, secs))
            kill_group(p)
            rc = p.wait()
        return "done %d %d" % (rc, busy_ticks() - busy0)

    def run(self, cmd):
        log("run: " + cmd)
        r = subprocess.run(["timeout", "-k", "5", "60", "bash", "-c", cmd],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.stdout:
            print(r.stdout, end="", flush=True)
        return "done %d" % r.returncode

    def handle(self, line):
        verb, _, rest = line.partition(" ")
        try:
            if verb == "start":
                return self.start(rest)
            if verb == "wait":
                return self.wait(rest)
            if verb == "run":
                return self.run(rest)
        except (ValueError, OSError) as e:
            return "err %s" % e
        return "err unknown request %r" % verb

    def cleanup(self):
        for p, _ in self.procs.values():
            kill_group(p)


def main():
    addr, port, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    srv = Server(raw)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((addr, port))
    lsock.listen(1)
    log("listening on %s:%d" % (addr, port))
    # Neither a client that never comes nor one whose guest died (its TCP
    # connection then just goes quiet) may keep this guest up until the
    # host's timeout.
    lsock.settimeout(CLIENT_WAIT_S)
    try:
        conn, peer = lsock.accept()
    except socket.timeout:
        log("no client after %ds: giving up" % CLIENT_WAIT_S)
        sys.exit(1)
    log("client %s:%d" % peer)
    conn.settimeout(IDLE_S)
    f = conn.makefile("rw", buffering=1, newline="\n")
    try:
        for line in f:
            line = line.rstrip("\n")
            if line == "quit":
                f.write("bye\n")
                break
            f.write(srv.handle(line) + "\n")
    except socket.timeout:
        log("the client was silent for %ds: giving up" % IDLE_S)
        sys.exit(1)
    finally:
        srv.cleanup()
    log("done")


if __name__ == "__main__":
    main()
