#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The limits profile: module parameter "limits" (softsrd or efa) applies to
# devices created after it is set, shows in the device's limits_profile
# file, and sets what query_device and query_port report and what
# create_qp accepts.  Devices made before keep theirs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_limits)
param=/sys/module/rdma_srd/parameters/limits
orig=$(cat "$param")
restore_limits() { echo "$orig" >"$param"; }
trap 'restore_limits; srd_cleanup' EXIT

veth_pair slm0 slm1
pp ip addr add 10.8.0.1/24 dev slm0
pp ip addr add 10.8.0.2/24 dev slm1

expect_eq "default limits profile" softsrd "$orig"
add_srd srdlm0 slm0
expect_eq "srdlm0's limits_profile" softsrd "$(cat /sys/class/infiniband/srdlm0/limits_profile)"

pp sh -c "echo efa > $param"
expect_eq "limits after writing efa" efa "$(cat "$param")"
expect_fail_with "an unknown profile is refused" "Invalid argument" \
	bash -c "echo infiniband > $param"
add_srd srdlm1 slm1
expect_eq "srdlm1's limits_profile" efa "$(cat /sys/class/infiniband/srdlm1/limits_profile)"
expect_eq "srdlm0 keeps its limits_profile" softsrd "$(cat /sys/class/infiniband/srdlm0/limits_profile)"

try "$bin" srdlm0 softsrd || fail "srdlm0 does not have the softsrd limits"
try "$bin" srdlm1 efa || fail "srdlm1 does not have the efa limits"
exit $KSFT_PASS
