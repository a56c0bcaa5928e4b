#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Open MPI's launch agent for ranks in network namespaces (srd_mpi.sh):
# mpirun --mca plm_rsh_agent srd_mpi_agent.sh treats each name in its host
# list as a remote host and calls
#
#   srd_mpi_agent.sh [OPTIONS...] HOST COMMAND...
#
# as it would call ssh.  This runs COMMAND (a shell command line: the
# orted launch) in the network namespace of HOST, with HOST as hostname in
# a UTS namespace of its own, so that the daemons of two namespaces on one
# machine are two nodes.  Host names may not contain '_' (ORTE refuses
# them), so HOST "t-a" means namespace "t_a" when that one exists.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
	shift
done
host=${1:?usage: srd_mpi_agent.sh HOST COMMAND...}
shift
ns=$host
[ -e "/run/netns/${host//-/_}" ] && ns=${host//-/_}
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $host && $*"
