#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Open MPI's launch agent between `make bench`'s two guests, which have no
# ssh (scripts/bench-guest.sh mpi_rows).  mpirun --mca plm_rsh_agent
# bench-mpi-agent.py calls it as it would call ssh, to start its daemon
# (orted) on the other guest:
#
#   bench-mpi-agent.py [OPTIONS...] HOST COMMAND...
#                       (client guest, from mpirun) sends COMMAND to
#                       HOST:$BENCH_MPI_PORT and copies what it prints to
#                       stdout until the command ends
#   bench-mpi-agent.py serve ADDR PORT
#                       (server guest, through bench-serve.py's start)
#                       takes one connection on ADDR:PORT, runs the line
#                       it sends with bash -c, its output to the
#                       connection, and exits with its status
#
# One connection per mpirun: with 2 or 4 ranks on two hosts, mpirun
# starts one daemon, on the host that is not its own.

import os
import socket
import subprocess
import sys


def serve(addr, port):
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((addr, port))
    lsock.listen(1)
    conn, peer = lsock.accept()
    lsock.close()
    with conn.makefile("r") as f:
        cmd = f.readline().rstrip("\n")
    print("bench-mpi-agent: %s:%d runs: %s" % (peer[0], peer[1], cmd), flush=True)
    rc = subprocess.call(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                         stdout=conn.fileno(), stderr=conn.fileno())
    # The end of the output, even if the command left a child holding it.
    conn.shutdown(socket.SHUT_RDWR)
    conn.close()
    print("bench-mpi-agent: exit %d" % rc, flush=True)
    return rc


def launch(args):
    # ssh's options, which Open MPI may pass, mean nothing here.
    while args and args[0].startswith("-"):
        args = args[1:]
    if len(args) < 2:
        sys.exit("usage: bench-mpi-agent.py [OPTIONS...] HOST COMMAND...")
    port = int(os.environ.get("BENCH_MPI_PORT", "0"))
    if not port:
        sys.exit("bench-mpi-agent.py: BENCH_MPI_PORT is not set")
    s = socket.create_connection((args[0], port), timeout=30)
    s.settimeout(None)
    s.sendall((" ".join(args[1:]) + "\n").encode())
    while True:
        b = s.recv(65536)
        if not b:
            return 0
        sys.stdout.buffer.write(b)
        sys.stdout.flush()


def main():
    if sys.argv[1:2] == ["serve"] and len(sys.argv) == 4:
        return serve(sys.argv[2], int(sys.argv[3]))
    return launch(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
