#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rmmod rdma_srd with devices present (one in another namespace, one on a
# netdev already being deleted) removes them all; the module loads again.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
[ -n "${SRD_MODULE:-}" ] && [ -f "$SRD_MODULE" ] || skip "SRD_MODULE (the .ko to reload) is not set"

defer module_insert

veth_pair sm0 sm1
add_srd srdm0 sm0
add_srd srdm1 sm1
new_netns srdns_m
pp ip -n srdns_m link add sm2 type veth peer name sm3
pp ip -n srdns_m link set sm2 up
pp ip netns exec srdns_m rdma link add srdm2 type srd netdev sm2
defer del_link srdm2
expect_eq "devices before rmmod" 3 "$(find /sys/class/infiniband -maxdepth 1 -name 'srdm*' | wc -l)"

pp rmmod rdma_srd
[ ! -d /sys/module/rdma_srd ] || fail "rdma_srd still loaded"
expect_eq "devices after rmmod" 0 "$(find /sys/class/infiniband -maxdepth 1 -name 'srdm*' 2>/dev/null | wc -l)"
[[ "$(rdma link show)" != *srdm* ]] || fail "rdma link still shows srdm devices"

pp insmod "$SRD_MODULE"
add_srd srdm0 sm0
expect_match "a device after reload" 'state ACTIVE' "$(rdma link show srdm0/1)"

# Unload while a netdev deletion is queuing the device's unregistration.
pp ip link del sm0 &
pp rmmod rdma_srd
wait
[ ! -d /sys/module/rdma_srd ] || fail "rdma_srd still loaded after the racing rmmod"
exit $KSFT_PASS
