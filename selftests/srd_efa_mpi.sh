#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's Open MPI 4.1, unmodified, over libfabric's efa provider on srd
# devices (pml cm, mtl ofi): srd_mpi's checked ping-pongs and an allreduce
# with 2 ranks, one per namespace, then 4 ranks, two per namespace.
#
# How ranks reach the namespaces: mpirun runs in NS_A and names the two
# namespaces as hosts ("sem-a", "sem-b": ORTE refuses '_'); its launch
# agent, srd_mpi_agent.sh, starts each orted in its namespace, as ssh
# would on a remote host.  Each namespace must see only its own srd
# device, as a container would, or every rank picks the first device
# listed: so RDMA runs in exclusive namespace mode, with each device moved
# into its namespace (rdma dev set DEV netns NS).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd mpirun unshare
bin=$(srd_bin srd_mpi)
run=$(srd_efa_run)
agent=$SRD_TOP/selftests/srd_mpi_agent.sh

defer netns_mode shared
netns_mode exclusive
set_limits efa
two_hosts sem 9000
try rdma dev set "$DEV_A" netns "$NS_A" || fail "cannot move $DEV_A into $NS_A"
try rdma dev set "$DEV_B" netns "$NS_B" || fail "cannot move $DEV_B into $NS_B"
expect_eq "the devices $NS_A sees" "$DEV_A" "$(ip netns exec "$NS_A" rdma dev show | awk '{ print $2 }' | tr -d :)"
expect_eq "the devices $NS_B sees" "$DEV_B" "$(ip netns exec "$NS_B" rdma dev show | awk '{ print $2 }' | tr -d :)"
# Both in their namespaces now: gone with them at cleanup.
pp ip netns exec "$NS_A" mkdir -p /tmp/srd_mpi
mountpoint -q /dev/shm || fail "no /dev/shm (Open MPI needs it)"

# counter NS DEV NAME
counter() { ip netns exec "$1" cat "/sys/class/infiniband/$2/hw_counters/$3"; }

# mpi NP: NP ranks, half in each namespace.
mpi() {
	local np=$1 a0 b0 a1 b1 out rc
	a0=$(counter "$NS_A" "$DEV_A" srd_msgs_sent)
	b0=$(counter "$NS_B" "$DEV_B" srd_msgs_sent)
	echo "+ ip netns exec $NS_A srd-efa-run mpirun -np $np --host ${NS_A//_/-}:$((np / 2)),${NS_B//_/-}:$((np / 2)) ... srd_mpi"
	out=$(cd /tmp && ip netns exec "$NS_A" env OMPI_ALLOW_RUN_AS_ROOT=1 \
		OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FI_EFA_ENABLE_SHM_TRANSFER=0 \
		timeout -k 5 300 "$run" mpirun -np "$np" \
		--host "${NS_A//_/-}:$((np / 2)),${NS_B//_/-}:$((np / 2))" \
		--mca plm_rsh_agent "$agent" --mca routed direct \
		--mca oob_tcp_if_include 10.201.0.0/24 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include efa \
		--mca btl self \
		-x LD_LIBRARY_PATH -x RDMAV_DRIVERS -x FI_EFA_ENABLE_SHM_TRANSFER \
		"$bin" 262144 4 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "mpirun -np $np exited $rc"
	[ "$(grep -c '^srd_mpi: rank .* 0 corrupt; allreduce \([0-9]*\) (expected \1)$' <<<"$out")" -eq "$np" ] ||
		fail "mpirun -np $np: expected $np ranks to report clean exchanges and the allreduce"
	expect_eq "mpirun -np $np: ranks per namespace" "$((np / 2)) $((np / 2))" \
		"$(grep -c "on ${NS_A//_/-}:" <<<"$out") $(grep -c "on ${NS_B//_/-}:" <<<"$out")"
	a1=$(counter "$NS_A" "$DEV_A" srd_msgs_sent)
	b1=$(counter "$NS_B" "$DEV_B" srd_msgs_sent)
	[ "$a1" -gt "$a0" ] && [ "$b1" -gt "$b0" ] ||
		fail "mpirun -np $np: expected SRD messages from both devices, saw $DEV_A $a0 -> $a1, $DEV_B $b0 -> $b1"
	echo "ok: mpirun -np $np over softsrd: $DEV_A sent $((a1 - a0)), $DEV_B $((b1 - b0)) SRD messages"
}

mpi 2
mpi 4
exit $KSFT_PASS
