#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma link add creates an srd device that rdma link, sysfs and ibv_devices
# show; rdma link del removes it; the name can be reused.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma ibv_devices

veth_pair sl0 sl1
add_srd srdl0 sl0

out=$(rdma link show srdl0/1)
echo "$out"
expect_match "rdma link show" '^link srdl0/1 state ACTIVE physical_state LINK_UP netdev sl0' "$out"
expect_eq "hca_type" softsrd "$(cat /sys/class/infiniband/srdl0/hca_type)"
expect_eq "node_type" "7: unspecified" "$(cat /sys/class/infiniband/srdl0/node_type)"

out=$(ibv_devices)
echo "$out"
guid=$(tr -d : </sys/class/infiniband/srdl0/node_guid)
expect_match "ibv_devices lists srdl0" "srdl0[[:space:]]+$guid" "$out"

pp rdma link del srdl0
srd_link_gone srdl0 || fail "srdl0 still in sysfs after rdma link del"
out=$(rdma link show)
[[ "$out" != *srdl0* ]] || fail "rdma link still shows srdl0: $out"
[[ "$(ibv_devices)" != *srdl0* ]] || fail "ibv_devices still lists srdl0"
echo "ok: rdma link del removed srdl0"

add_srd srdl0 sl0
srd_link_exists srdl0 || fail "re-adding srdl0 after del failed"
echo "ok: the name can be reused"
exit $KSFT_PASS
