#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# srd devices work on netdevs in non-initial namespaces, created from
# inside them: each takes its GIDs and state from its own namespace.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma ibv_devinfo

new_netns srdns_a
new_netns srdns_b
pp ip -n srdns_a link add na type veth peer name nb netns srdns_b
pp ip -n srdns_a addr add 10.9.0.1/24 dev na
pp ip -n srdns_b addr add 10.9.0.2/24 dev nb
pp ip -n srdns_a link set na up
pp ip -n srdns_b link set nb up

pp ip netns exec srdns_a rdma link add srdna type srd netdev na
defer del_link srdna
pp ip netns exec srdns_b rdma link add srdnb type srd netdev nb
defer del_link srdnb

out=$(ip netns exec srdns_a rdma link show srdna/1)
echo "$out"
expect_match "rdma link in srdns_a" 'state ACTIVE .*netdev na' "$out"

wait_for "srdna has the GID of 10.9.0.1" 10 has_gid srdna "$(gid_of_ipv4 10.9.0.1)"
wait_for "srdnb has the GID of 10.9.0.2" 10 has_gid srdnb "$(gid_of_ipv4 10.9.0.2)"
has_gid srdna "$(gid_of_ipv4 10.9.0.2)" && fail "srdna shows srdns_b's address"

info=$(ip netns exec srdns_b ibv_devinfo -d srdnb)
echo "$info"
expect_match "ibv_devinfo in srdns_b" 'state:[[:space:]]+PORT_ACTIVE' "$info"

# A netdev of the same name in the initial namespace is a different netdev.
veth_pair na nx
add_srd srdnx na
expect_match "the init_net 'na' has its own device" 'netdev na' "$(rdma link show srdnx/1)"

pp ip -n srdns_b addr add 10.9.1.2/24 dev nb
wait_for "address change inside srdns_b reaches srdnb" 10 has_gid srdnb "$(gid_of_ipv4 10.9.1.2)"
pp ip -n srdns_b link set nb down
# shellcheck disable=SC2016 # the inner shell expands it
wait_for "srdnb DOWN when its netdev goes down in srdns_b" 10 \
	bash -c '[ "$(cat /sys/class/infiniband/srdnb/ports/1/state)" = "1: DOWN" ]'
exit $KSFT_PASS
