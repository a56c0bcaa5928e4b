#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`: runs inside the guest.  Two hosts (network namespaces) joined
# by a veth pair, an srd device on each, and what the standard tools say:
# a UD ping-pong, then SRD with unmodified EFA software (perftest -c SRD,
# libfabric's efa provider) through srd-efa-run, with the SRD counters
# before and after.

set -eu
# pp (a failed step stops the demo, named), wait_for, listening
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
# The steps as a transcript: a blank line, then "$ CMD".
srd_show() {
	echo
	echo "\$ $*"
}
run=${SRD_TOP:?}/build/efa-compat/srd-efa-run

# wait_listen NS PORT: until something in NS listens on TCP PORT.
wait_listen() {
	wait_for "$1 listens on TCP $2" 20 listening "$1" "$2"
}

# demo_counters DEV: the SRD message and packet counters of DEV (those
# the demo is about; selftests/lib.sh's srd_counters prints all that are
# not zero).
demo_counters() {
	echo "  $1: $(cd "/sys/class/infiniband/$1/hw_counters" &&
		for c in srd_msgs_sent srd_msgs_delivered srd_tx_data_pkts srd_rx_data_pkts srd_retransmits srd_rdma_reads_in; do
			printf '%s=%s ' "${c#srd_}" "$(cat $c)"
		done)"
}

# The efa limits profile: EFA's limits and conventions (libfabric needs them).
echo efa >/sys/module/rdma_srd/parameters/limits

pp ip netns add hostA
pp ip netns add hostB
pp ip -n hostA link add eth0 type veth peer name eth0 netns hostB
# Jumbo frames, as EFA's 9001-byte MTU: SRD messages of up to 4 KiB in
# the efa profile.
pp ip -n hostA link set eth0 mtu 9000
pp ip -n hostB link set eth0 mtu 9000
pp ip -n hostA addr add 10.0.0.1/24 dev eth0
pp ip -n hostB addr add 10.0.0.2/24 dev eth0
pp ip -n hostA link set eth0 up
pp ip -n hostB link set eth0 up
pp ip netns exec hostA rdma link add srd0 type srd netdev eth0
pp ip netns exec hostB rdma link add srd1 type srd netdev eth0
pp ip netns exec hostA rdma link
pp ibv_devices
pp ip netns exec hostA ibv_devinfo -d srd0
pp ip netns exec hostB ibv_devinfo -v -d srd1

echo
echo "# A UD ping-pong between the two hosts over IPv4 (GID 0)."
echo "\$ ip netns exec hostB ibv_ud_pingpong -d srd1 -g 0 -s 1024 -n 1000 &"
ip netns exec hostB ibv_ud_pingpong -d srd1 -g 0 -s 1024 -n 1000 >/dev/null &
server=$!
# The server listens on TCP 18515 for the address exchange.
wait_listen hostB 18515
pp ip netns exec hostA ibv_ud_pingpong -d srd0 -g 0 -s 1024 -n 1000 10.0.0.2
wait "$server"
pp ip netns exec hostA rdma statistic show link srd0/1

echo
echo "# SRD: perftest's ib_send_bw -c SRD, unmodified, on softsrd's libefa."
echo "# SRD counters before:"
demo_counters srd0
demo_counters srd1
echo "\$ ip netns exec hostB srd-efa-run ib_send_bw -d srd1 -x 0 -c SRD -s 4096 -n 2000 &"
ip netns exec hostB "$run" ib_send_bw -d srd1 -x 0 -c SRD -s 4096 -n 2000 >/dev/null &
server=$!
wait_listen hostB 18515
pp ip netns exec hostA "$run" ib_send_bw -d srd0 -x 0 -c SRD -s 4096 -n 2000 10.0.0.2
wait "$server"
echo "# SRD counters after:"
demo_counters srd0
demo_counters srd1

echo
echo "# SRD through libfabric's efa provider: an rdm ping-pong, data checked,"
echo "# shared memory off so that it crosses softsrd."
pp ip netns exec hostA "$run" fi_info -p efa -t FI_EP_RDM
echo "\$ ip netns exec hostB srd-efa-run fi_pingpong -p efa -e rdm -d srd1-rdm -c &"
ip netns exec hostB env FI_EFA_ENABLE_SHM_TRANSFER=0 "$run" fi_pingpong -p efa -e rdm -d srd1-rdm -c >/dev/null &
server=$!
wait_listen hostB 47592
pp ip netns exec hostA env FI_EFA_ENABLE_SHM_TRANSFER=0 "$run" fi_pingpong -p efa -e rdm -d srd0-rdm -c 10.0.0.2
wait "$server"
echo "# SRD counters after:"
demo_counters srd0
demo_counters srd1
echo softsrd >/sys/module/rdma_srd/parameters/limits

pp rdma link del srd0
pp ip netns del hostB
echo
echo "# hostB's netdev is gone, and srd1 with it:"
for _ in $(seq 100); do
	[ -d /sys/class/infiniband/srd1 ] || break
	sleep 0.05
done
pp rdma link
pp ip netns del hostA
