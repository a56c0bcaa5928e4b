#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`: runs inside the guest.  Two hosts (network namespaces) joined
# by a veth pair, an srd device on each, and what the standard tools say.

set -eu
pp() {
	echo
	echo "\$ $*"
	"$@"
}

pp ip netns add hostA
pp ip netns add hostB
pp ip -n hostA link add eth0 type veth peer name eth0 netns hostB
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
for _ in $(seq 200); do
	ip netns exec hostB ss -ltn | grep -q ':18515 ' && break
	sleep 0.05
done
pp ip netns exec hostA ibv_ud_pingpong -d srd0 -g 0 -s 1024 -n 1000 10.0.0.2
wait "$server"
pp ip netns exec hostA rdma statistic show link srd0/1
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
