#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The limits profile: module parameter "limits" (softsrd, efa-gen1,
# efa-gen2 or efa-gen3; "efa" names efa-gen1) applies to devices created after it is
# set, shows in the device's limits_profile file, and sets what
# query_device and query_port report and what create_qp accepts.  Devices
# made before keep theirs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_limits)
param=/sys/module/rdma_srd/parameters/limits
orig=$(cat "$param")
defer srd_write "$param" "$orig"

veth_pair slm0 slm1
pp ip addr add 10.8.0.1/24 dev slm0
pp ip addr add 10.8.0.2/24 dev slm1
veth_pair slm2 slm3
pp ip addr add 10.8.1.1/24 dev slm2
pp ip addr add 10.8.1.2/24 dev slm3

expect_eq "default limits profile" softsrd "$orig"
add_srd srdlm0 slm0
expect_eq "srdlm0's limits_profile" softsrd "$(cat /sys/class/infiniband/srdlm0/limits_profile)"

# "efa", the name from before there were generations, is efa-gen1.
pp sh -c "echo efa > $param"
expect_eq "limits after writing efa" efa-gen1 "$(cat "$param")"
expect_fail_with "an unknown profile is refused" "Invalid argument" \
	bash -c "echo infiniband > $param"
expect_fail_with "an EFA generation softsrd does not model is refused" \
	"Invalid argument" bash -c "echo efa-gen9 > $param"
add_srd srdlm1 slm1
expect_eq "srdlm1's limits_profile" efa-gen1 "$(cat /sys/class/infiniband/srdlm1/limits_profile)"
expect_eq "srdlm0 keeps its limits_profile" softsrd "$(cat /sys/class/infiniband/srdlm0/limits_profile)"
pp sh -c "echo efa-gen2 > $param"
expect_eq "limits after writing efa-gen2" efa-gen2 "$(cat "$param")"
add_srd srdlm2 slm2
expect_eq "srdlm2's limits_profile" efa-gen2 "$(cat /sys/class/infiniband/srdlm2/limits_profile)"
expect_eq "srdlm1 keeps its limits_profile" efa-gen1 "$(cat /sys/class/infiniband/srdlm1/limits_profile)"
pp sh -c "echo efa-gen3 > $param"
expect_eq "limits after writing efa-gen3" efa-gen3 "$(cat "$param")"
add_srd srdlm3 slm3
expect_eq "srdlm3's limits_profile" efa-gen3 "$(cat /sys/class/infiniband/srdlm3/limits_profile)"

try "$bin" srdlm0 softsrd || fail "srdlm0 does not have the softsrd limits"
try "$bin" srdlm1 efa-gen1 || fail "srdlm1 does not have the efa-gen1 limits"
try "$bin" srdlm2 efa-gen2 || fail "srdlm2 does not have the efa-gen2 limits"
try "$bin" srdlm3 efa-gen3 || fail "srdlm3 does not have the efa-gen3 limits"
exit $KSFT_PASS
