#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The port is ACTIVE while the netdev is up with carrier, DOWN otherwise.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma

veth_pair sp0 sp1
add_srd srdp0 sp0

# shellcheck disable=SC2317 # state_is is wait_for's command
state_is() { [ "$(port_state srdp0)" = "$1" ]; }
wait_for "ACTIVE with both ends up" 10 state_is "4: ACTIVE"
pp ip link set sp1 down
wait_for "DOWN when the peer drops carrier" 10 state_is "1: DOWN"
expect_match "rdma link" 'state DOWN' "$(rdma link show srdp0/1)"
pp ip link set sp1 up
wait_for "ACTIVE when carrier returns" 10 state_is "4: ACTIVE"
pp ip link set sp0 down
wait_for "DOWN when the netdev is down" 10 state_is "1: DOWN"
pp ip link set sp0 up
wait_for "ACTIVE when the netdev is up again" 10 state_is "4: ACTIVE"
exit $KSFT_PASS
