#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Deleting the netdev removes its srd device, in the initial namespace and
# when the netdev's namespace is deleted.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module

veth_pair sr0 sr1
add_srd srdr0 sr0
pp ip link del sr0
wait_for "srdr0 gone after its netdev is deleted" 10 srd_link_gone srdr0
[[ "$(rdma link show)" != *srdr0* ]] || fail "rdma link still shows srdr0"

new_netns srdns_r
pp ip -n srdns_r link add sr2 type veth peer name sr3
pp ip -n srdns_r link set sr2 up
pp ip netns exec srdns_r rdma link add srdr1 type srd netdev sr2
defer del_link srdr1
srd_link_exists srdr1 || fail "srdr1 was not created"
pp ip netns del srdns_r
wait_for "srdr1 gone after its namespace is deleted" 20 srd_link_gone srdr1
exit $KSFT_PASS
